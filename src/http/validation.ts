/**
 * Request schemas: every JSON file in schemas/ is compiled once at start.
 * A violation becomes a 400 that lists each failing path.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BadRequestError } from '../errors.ts';

// ajv-formats is CommonJS; under NodeNext its function sits one level down.
const addFormats = (addFormatsModule as unknown as { default: typeof addFormatsModule.default }).default;

export const SCHEMA_DIR = fileURLToPath(new URL('../../schemas/', import.meta.url));

export type SchemaName = string;
export interface PathError {
  path: string;
  message: string;
}

export interface Validator {
  /** The value as T, or a 400 that lists every failing path. */
  check<T>(name: SchemaName, value: unknown): T;
  /** The failing paths, empty when the value is valid. */
  problems(name: SchemaName, value: unknown): PathError[];
  schemas(): Record<string, object>;
}

export function makeValidator(dir: string = SCHEMA_DIR): Validator {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
  addFormats(ajv);
  const compiled = new Map<string, ValidateFunction>();
  const raw: Record<string, object> = {};
  // Every schema is added before any is compiled, so one may $ref another by its $id.
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const schema = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { $id?: string };
    const name = file.replace(/\.json$/, '');
    if (schema.$id !== name) throw new Error(`${file}: $id must be "${name}"`);
    raw[name] = schema;
    ajv.addSchema(schema);
  }
  for (const name of Object.keys(raw)) compiled.set(name, ajv.getSchema(name)!);
  const validatorOf = (name: SchemaName): ValidateFunction => {
    const validate = compiled.get(name);
    if (!validate) throw new Error(`no schema named ${name} in ${dir}`);
    return validate;
  };
  return {
    check<T>(name: SchemaName, value: unknown): T {
      const validate = validatorOf(name);
      if (!validate(value)) {
        throw new BadRequestError('invalid_body', describe(validate.errors ?? []), {
          errors: (validate.errors ?? []).map(toPathError),
        });
      }
      return value as T;
    },
    problems(name: SchemaName, value: unknown): PathError[] {
      const validate = validatorOf(name);
      return validate(value) ? [] : (validate.errors ?? []).map(toPathError);
    },
    schemas: () => raw,
  };
}

function toPathError(error: ErrorObject): PathError {
  let where = error.instancePath || '/';
  if (error.keyword === 'additionalProperties') {
    where = `${error.instancePath}/${(error.params as { additionalProperty: string }).additionalProperty}`;
    return { path: where, message: 'is not an allowed property' };
  }
  if (error.keyword === 'required') {
    where = `${error.instancePath}/${(error.params as { missingProperty: string }).missingProperty}`;
    return { path: where, message: 'is required' };
  }
  return { path: where, message: error.message ?? 'is invalid' };
}

function describe(errors: ErrorObject[]): string {
  const first = errors[0];
  if (!first) return 'the body does not match the schema';
  const { path: where, message } = toPathError(first);
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return `${where} ${message}${more}`;
}
