/**
 * Schema violations in words a client developer can act on: the field, what
 * is allowed (enum values listed, formats named, the pattern's own
 * description) and one message for a set of alternatives ("send actor or
 * actor_id") instead of one per branch. Pure: ajv's error objects in
 * (compiled with `verbose`), `{path, message}` out.
 */
import type { ErrorObject } from 'ajv';

export interface PathError {
  path: string;
  message: string;
}

const FORMATS: Record<string, string> = {
  'date-time': 'an RFC 3339 time such as 2026-11-22T10:00:00Z',
  date: 'a date such as 2026-11-22',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  uri: 'an absolute URL',
  email: 'an email address',
  uuid: 'a UUID',
};

const TYPES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function or(items: string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The message of one error that is not an alternative. */
function messageOf(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties': {
      const allowed = Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      return `is not an allowed property${allowed.length ? ` (allowed: ${allowed.join(', ')})` : ''}`;
    }
    case 'enum':
      return `must be one of: ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case 'format':
      return `must be ${FORMATS[params.format as string] ?? `in ${String(params.format)} format`}`;
    case 'type':
      return `must be ${or(String(params.type).split(',').map((t) => TYPES[t] ?? t))}`;
    case 'pattern': {
      const described = (error.parentSchema as { description?: string } | undefined)?.description;
      return described ? `must be ${described}` : `must match the pattern ${String(params.pattern)}`;
    }
    case 'maxLength':
      return `must be at most ${plural(params.limit as number, 'character')} long`;
    case 'minLength':
      return params.limit === 1 ? 'must not be empty' : `must be at least ${plural(params.limit as number, 'character')} long`;
    case 'maxItems':
      return `must hold at most ${plural(params.limit as number, 'item')}`;
    case 'minItems':
      return params.limit === 1 ? 'must not be empty' : `must hold at least ${plural(params.limit as number, 'item')}`;
    case 'maxProperties':
      return `must have at most ${plural(params.limit as number, 'property', 'properties')}`;
    case 'not': {
      const both = (error.schema as { required?: string[] } | undefined)?.required;
      return both ? `must not hold both ${both.join(' and ')}: send one of them` : 'matches a form that is not allowed';
    }
    case 'maximum':
      return `must be at most ${String(params.limit)}`;
    case 'minimum':
      return `must be at least ${String(params.limit)}`;
    default:
      return error.message ?? 'is invalid';
  }
}

function pathOf(error: ErrorObject): string {
  const params = error.params as Record<string, string>;
  if (error.keyword === 'required') return `${error.instancePath}/${params.missingProperty}`;
  if (error.keyword === 'additionalProperties') return `${error.instancePath}/${params.additionalProperty}`;
  return error.instancePath || '/';
}

/**
 * An `anyOf` / `oneOf` that failed as one message: "send actor or actor_id"
 * when every branch wants a property, "must be an IPv4 address or an IPv6
 * address" when every branch fails on the value itself.
 */
function alternativesMessage(branches: ErrorObject[]): string {
  if (branches.length > 0 && branches.every((e) => e.keyword === 'required')) {
    const names = [...new Set(branches.map((e) => (e.params as { missingProperty: string }).missingProperty))];
    return `send ${or(names)}`;
  }
  const own = branches.filter((e) => !['required', 'additionalProperties'].includes(e.keyword));
  const messages = [...new Set((own.length ? own : branches).map(messageOf))];
  if (messages.length === 0) return 'matches none of the allowed forms';
  // "must be an IPv4 address or an IPv6 address", not "must be … or must be …"
  if (messages.every((m) => m.startsWith('must be '))) return `must be ${or(messages.map((m) => m.slice('must be '.length)))}`;
  return or(messages);
}

/** ajv's errors → one `{path, message}` per problem, alternatives collapsed. */
export function toProblems(errors: ErrorObject[]): PathError[] {
  const alternatives = errors.filter((e) => e.keyword === 'anyOf' || e.keyword === 'oneOf');
  const inBranch = (e: ErrorObject, alt: ErrorObject) => e !== alt && e.schemaPath.startsWith(`${alt.schemaPath}/`);
  const problems: PathError[] = [];
  for (const error of errors) {
    if (alternatives.some((alt) => inBranch(error, alt))) continue;
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf') {
      const branches = errors.filter((e) => inBranch(e, error));
      const nested = alternatives.some((alt) => alt !== error && inBranch(error, alt));
      if (!nested) problems.push({ path: error.instancePath || '/', message: alternativesMessage(branches) });
      continue;
    }
    // a `not` on a value of the wrong type is noise beside the type error
    if (error.keyword === 'not' && errors.some((e) => e.keyword === 'type' && e.instancePath === error.instancePath)) continue;
    const path = pathOf(error);
    const message = messageOf(error);
    if (!problems.some((p) => p.path === path && p.message === message)) problems.push({ path, message });
  }
  return problems;
}

/** The one-line message of a 400: the first problems, then how many more the `errors` list holds. */
export function describeProblems(problems: PathError[], shown = 3): string {
  if (problems.length === 0) return 'the body does not match the schema';
  const text = problems.slice(0, shown).map((p) => `${p.path === '/' ? 'body' : p.path}: ${p.message}`);
  const more = problems.length > shown ? `; and ${problems.length - shown} more (see errors)` : '';
  return `${text.join('; ')}${more}`;
}
