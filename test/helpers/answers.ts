/**
 * Every 2xx JSON answer the suite sees through `call` is checked against the schema its route's contract names
 * (schemas/answers/), read from the /openapi.json the API serves: a route answering other than it documents fails
 * the test that saw it.
 */
import { makeValidator } from '../../src/validation/validator.ts';

const validator = makeValidator();

type Matcher = { method: string; pattern: RegExp; schema: string; route: string }[];
const documents = new Map<string, Promise<Matcher>>();

async function matcherOf(api: string): Promise<Matcher> {
  const doc = (await (await fetch(`${api}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> }>>;
  };
  const out: Matcher = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    const pattern = new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
    for (const [method, operation] of Object.entries(operations)) {
      for (const [status, answer] of Object.entries(operation.responses)) {
        const ref = answer.content?.['application/json']?.schema?.$ref;
        if (!status.startsWith('2') || !ref) continue;
        out.push({
          method: method.toUpperCase(),
          pattern,
          schema: ref.replace('#/components/schemas/answer.', 'answers/'),
          route: `${method.toUpperCase()} ${path}`,
        });
      }
    }
  }
  return out;
}

export async function checkAnswer(api: string, method: string, url: string, status: number, body: unknown): Promise<void> {
  if (status < 200 || status >= 300 || body === undefined) return;
  if (!documents.has(api)) documents.set(api, matcherOf(api));
  const path = url.split('?')[0]!;
  const match = (await documents.get(api)!).find((m) => m.method === method && m.pattern.test(path));
  if (!match) return;
  const problems = validator.problems(match.schema, body);
  if (problems.length) throw new Error(`${match.route} answered other than ${match.schema} documents: ${JSON.stringify(problems.slice(0, 5))}`);
}
