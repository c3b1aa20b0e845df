/**
 * npm run contracts: the TypeScript types of the schemas, generated (json-schema-to-typescript) so the routes, the
 * dashboard and the Node SDK read the same contracts the validator checks.
 * - src/generated/schema-types.ts: every request schema (a body `<Name>Body`, a query `<Name>Query`) and every answer
 *   (`<Name>`), with the maps the route contracts type their handlers by (RequestSchemas, AnswerSchemas);
 * - packages/node/src/api-types.ts: what the SDK sends and reads (activation, configuration, contacts, decisions).
 * test/contract-types.test.ts fails when a file here differs from what the schemas give.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile, type JSONSchema } from 'json-schema-to-typescript';
import { SCHEMA_DIR, schemaFiles } from '../src/validation/validator.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SDK_ANSWERS = ['answers/activation', 'answers/sdk-config', 'answers/seats-used', 'answers/decision', 'answers/decisions-feed', 'contacts'];

type Schema = Record<string, unknown>;

const pascal = (name: string) => name.replace(/(^|[-/])([a-z0-9])/g, (_m, _s, c: string) => c.toUpperCase());

/** The type name of a schema: answers by their name, requests by theirs and what they are. */
function typeName(id: string): string {
  if (id.startsWith('answers/')) return pascal(id.slice('answers/'.length));
  return id.endsWith('-query') ? pascal(id) : `${pascal(id)}Body`;
}

/** A relative reference read against the `$id` it appears under, as JSON Schema resolves it. */
function resolveId(ref: string, base: string): string {
  return base.includes('/') && !ref.includes('/') ? `${base.slice(0, base.lastIndexOf('/') + 1)}${ref}` : ref;
}

/**
 * The schema with every `$ref` to a part of a schema replaced by that part (none is recursive) and every `$ref` to
 * a whole schema by its type's name; titles and `$id`s are taken out, so each schema compiles to one type, named by
 * its file.
 */
function inline(node: unknown, root: Schema, base: string, all: Map<string, Schema>): unknown {
  if (Array.isArray(node)) return node.map((n) => inline(n, root, base, all));
  if (!node || typeof node !== 'object') return node;
  const { $ref, title: _title, $id: _id, $schema: _dialect, $defs: _defs, ...rest } = node as Schema;
  if (typeof $ref === 'string') {
    const [resource = '', fragment = ''] = $ref.split('#');
    const target = resource ? resolveId(resource, base) : base;
    const targetRoot = resource ? all.get(target) : root;
    if (!targetRoot) throw new Error(`${base}: no schema ${target} for $ref ${$ref}`);
    // what sits beside the $ref (a description) adds to the schema it names, and never makes it `unknown`
    const { tsType: _unknown, ...beside } = inline(rest, root, base, all) as Schema;
    if (!fragment) return { tsType: typeName(target), ...beside }; // a whole schema: its type, by name
    const named = fragment
      .split('/')
      .slice(1)
      .reduce<unknown>((n, part) => (n as Schema)[part], targetRoot);
    return { ...(inline(named, targetRoot, target, all) as Schema), ...beside };
  }
  const out: Schema = {};
  for (const [k, v] of Object.entries(rest)) {
    // `properties` maps names to schemas: a property named `title` is a property, not a keyword to take out
    out[k] =
      k === 'properties' ? Object.fromEntries(Object.entries(v as Schema).map(([name, p]) => [name, inline(p, root, base, all)])) : inline(v, root, base, all);
  }
  // an object whose members the schema leaves open is a record of them, not `{}`
  const isObject = out.type === 'object' || (Array.isArray(out.type) && out.type.includes('object'));
  if (isObject && !out.properties && !('additionalProperties' in out)) out.additionalProperties = true;
  // a schema that says nothing of its value's form (an event as stored) is any JSON value
  if (!SHAPING.some((k) => k in out)) out.tsType = 'unknown';
  return out;
}

/** The keywords that give a value its form; a schema with none of them allows any value. */
const SHAPING = ['type', 'enum', 'const', 'anyOf', 'oneOf', 'allOf', 'properties', 'items', 'tsType', 'additionalProperties'];

async function typeOf(id: string, all: Map<string, Schema>): Promise<string> {
  const schema = all.get(id)!;
  const body = inline(schema, schema, id, all) as Schema;
  if (id.endsWith('-query')) {
    // a query parameter with a default is always there once the validator read the query
    const properties = (body.properties ?? {}) as Record<string, Schema>;
    body.required = Object.keys(properties).filter((p) => 'default' in properties[p]!);
  }
  const description = [schema.title, body.description].filter(Boolean).join('. ');
  const code = await compile({ ...body, description: description || undefined, title: typeName(id) } as JSONSchema, typeName(id), {
    bannerComment: '',
    additionalProperties: false,
    declareExternallyReferenced: false,
  });
  // an object that may hold nothing is said so: an empty interface would allow any value
  return code.trim().replace(/^export interface (\w+) \{\}$/m, 'export type $1 = Record<string, never>;');
}

const HEADER = (what: string) => `/* Generated by \`npm run contracts\` from ${what}; edit the schemas, not this file. */\n`;

/** Each generated file's path (from the repository's root) and text. */
export async function contractTypes(): Promise<Record<string, string>> {
  const all = new Map<string, Schema>();
  for (const file of schemaFiles()) {
    const schema = JSON.parse(fs.readFileSync(path.join(SCHEMA_DIR, file), 'utf8')) as Schema;
    all.set(schema.$id as string, schema);
  }
  const ids = [...all.keys()];
  const requests = ids.filter((id) => !id.startsWith('answers/'));
  const answers = ids.filter((id) => id.startsWith('answers/'));
  const map = (name: string, list: string[]) =>
    `export interface ${name} {\n${list.map((id) => `  '${id.replace(/^answers\//, '')}': ${typeName(id)};`).join('\n')}\n}`;
  const types = await Promise.all(ids.map((id) => typeOf(id, all)));
  const server = [
    HEADER('schemas/ and schemas/answers/'),
    ...types,
    '/** The request schemas by name: bodies and queries. */',
    map('RequestSchemas', requests),
    "/** The answers' schemas by name (schemas/answers/). */",
    map('AnswerSchemas', answers),
  ].join('\n\n');
  const sdk = [HEADER(SDK_ANSWERS.map((id) => `schemas/${id}.json`).join(' and ')), ...(await Promise.all(SDK_ANSWERS.map((id) => typeOf(id, all))))].join(
    '\n\n',
  );
  return { 'src/generated/schema-types.ts': `${server}\n`, 'packages/node/src/api-types.ts': `${sdk}\n` };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  for (const [file, text] of Object.entries(await contractTypes())) {
    fs.writeFileSync(path.join(ROOT, file), text);
    console.log(`wrote ${file}`);
  }
}
