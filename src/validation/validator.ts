/**
 * Request schemas: every JSON file in schemas/ is compiled once at start, and
 * the answers' schemas in schemas/answers/ beside them (named `answers/<file>`).
 * A violation becomes a 400 that lists each failing path with a message a
 * person can act on (src/validation/messages.ts). Used by the HTTP layer
 * and the services alike.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fs from 'node:fs';
import path from 'node:path';
import { BadRequestError } from '../errors.ts';
import { describeProblems, toProblems, type PathError } from './messages.ts';
import { rootPath } from '../util/paths.ts';

// ajv-formats is CommonJS; under NodeNext its function sits one level down.
const addFormats = (addFormatsModule as unknown as { default: typeof addFormatsModule.default }).default;

export const SCHEMA_DIR = rootPath('schemas');

export type SchemaName = string;
export type { PathError };

export interface Validator {
  /** The value as T, or a 400 that lists every failing path. */
  check<T>(name: SchemaName, value: unknown): T;
  /** The failing paths, empty when the value is valid. */
  problems(name: SchemaName, value: unknown): PathError[];
  /**
   * The values to take out to make `value` valid (JSON pointers, with each one's problem): the value of the wrong
   * type or form, or the object missing a member it needs. An alternative at the top (`anyOf` at '') is not one.
   */
  invalidValues(name: SchemaName, value: unknown): { path: string; problem: string }[];
  /**
   * Query parameters checked against a `*-query` schema: numbers read from their text, defaults filled in, other
   * parameters left out of the answer; a bad one is a 400 `invalid_query` naming it.
   */
  query<T>(name: SchemaName, query: Record<string, unknown>): T;
  schemas(): Record<string, object>;
}

/** The schema files of `dir`, requests first, then the answers' (`answers/<name>.json`). */
export function schemaFiles(dir: string = SCHEMA_DIR): string[] {
  const json = (sub: string) =>
    fs
      .readdirSync(path.join(dir, sub))
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => path.posix.join(sub, f));
  return [...json(''), ...json('answers')];
}

export function makeValidator(dir: string = SCHEMA_DIR): Validator {
  const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: true, strictRequired: false, allowUnionTypes: true });
  addFormats(ajv);
  const compiled = new Map<string, ValidateFunction>();
  const raw: Record<string, object> = {};
  // Every schema is added before any is compiled, so one may $ref another by its $id.
  for (const file of schemaFiles(dir)) {
    const schema = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { $id?: string };
    const name = file.replace(/\.json$/, '');
    if (schema.$id !== name) throw new Error(`${file}: $id must be "${name}"`);
    raw[name] = schema;
    ajv.addSchema(schema);
  }
  for (const name of Object.keys(raw)) compiled.set(name, ajv.getSchema(name)!);
  // Query parameters arrive as text: a second instance reads numbers from it and fills in defaults.
  const queryAjv = new Ajv2020({
    allErrors: true,
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    coerceTypes: true,
    useDefaults: true,
    verbose: true,
  });
  addFormats(queryAjv);
  for (const schema of Object.values(raw)) queryAjv.addSchema(schema);
  const validatorOf = (name: SchemaName): ValidateFunction => {
    const validate = compiled.get(name);
    if (!validate) throw new Error(`no schema named ${name} in ${dir}`);
    return validate;
  };
  return {
    check<T>(name: SchemaName, value: unknown): T {
      const validate = validatorOf(name);
      if (!validate(value)) {
        const errors = toProblems(validate.errors ?? []);
        throw new BadRequestError('invalid_body', describeProblems(errors), { errors });
      }
      return value as T;
    },
    problems(name: SchemaName, value: unknown): PathError[] {
      const validate = validatorOf(name);
      return validate(value) ? [] : toProblems(validate.errors ?? []);
    },
    invalidValues(name: SchemaName, value: unknown) {
      const validate = validatorOf(name);
      if (validate(value)) return [];
      const out = new Map<string, string>();
      for (const error of validate.errors ?? []) {
        if (error.instancePath === '' || out.has(error.instancePath)) continue;
        out.set(error.instancePath, `${error.keyword}: ${error.message ?? ''}`.trim());
      }
      return [...out].map(([path, problem]) => ({ path, problem }));
    },
    query<T>(name: SchemaName, query: Record<string, unknown>): T {
      if (!name.endsWith('-query') || !raw[name]) throw new Error(`no query schema named ${name} in ${dir}`);
      const properties = Object.keys((raw[name] as { properties: object }).properties);
      const value: Record<string, unknown> = Object.fromEntries(properties.filter((p) => query[p] !== undefined).map((p) => [p, query[p]]));
      const validate = queryAjv.getSchema(name)!;
      if (!validate(value)) {
        const errors = toProblems(validate.errors ?? []).map((e) => ({ ...e, path: e.path.replace(/^\//, '') }));
        throw new BadRequestError('invalid_query', describeProblems(errors), { errors });
      }
      return value as T;
    },
    schemas: () => raw,
  };
}
