/**
 * JSON text from a client → value, with a 4xx for each problem: malformed
 * JSON (Python's NaN and Infinity read as null, as Relay reads them), keys
 * that a document store would interpret ($-prefixed, dotted, __proto__) and
 * nesting too deep. Lone UTF-16 surrogates become U+FFFD. Used for request
 * bodies and for the payloads inside them (envelope items).
 */
import { wellFormed } from '../domain/client-keys.ts';
import { repairPythonJson } from '../domain/event-repairs.ts';
import { BadRequestError } from '../errors.ts';

const MAX_DEPTH = 32;

/**
 * JSON text → value, with the same 400s as a body: malformed JSON, and
 * (unless `keys` is false, for a payload only parts of which are kept and
 * checked after) forbidden keys and nesting too deep.
 */
export function parseJson(text: string, where = 'the body', keys = true): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // Python's clients write NaN and Infinity, which JSON has not: read as null, as Relay does
    const repaired = repairPythonJson(text);
    try {
      if (repaired === text) throw err;
      value = JSON.parse(repaired);
    } catch {
      throw new BadRequestError('malformed_json', `${where} is not valid JSON: ${(err as Error).message}`);
    }
  }
  // Text decoded from UTF-8 holds no lone surrogate; only a `\uD800`-style escape makes one.
  if (SURROGATE_ESCAPE.test(text)) value = wellFormedDeep(value);
  if (keys) checkKeys(value);
  return value;
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/**
 * A parsed value with every lone UTF-16 surrogate, in strings and keys, made U+FFFD: what MongoDB would store
 * anyway, and what Redis' cjson can read (it refuses the escape of a lone surrogate, so one would fail every
 * script call that carried it).
 */
function wellFormedDeep(value: unknown): unknown {
  if (typeof value === 'string') return wellFormed(value);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(wellFormedDeep);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [wellFormed(k), wellFormedDeep(v)]));
}

/** Rejects keys a document store would interpret, anywhere in the value. */
export function checkKeys(value: unknown, path = '', depth = 0): void {
  if (depth > MAX_DEPTH) throw new BadRequestError('too_deep', `the body nests deeper than ${MAX_DEPTH} levels`);
  if (Array.isArray(value)) {
    value.forEach((item, i) => checkKeys(item, `${path}/${i}`, depth + 1));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  for (const [key, inner] of Object.entries(value)) {
    if (key.startsWith('$') || key.includes('.') || key.includes('\0') || key === '__proto__' || key === '') {
      throw new BadRequestError('forbidden_key', `${path}/${key}: keys may not be empty, start with $, or contain . or NUL`, {
        errors: [{ path: `${path}/${key}`, message: 'forbidden key' }],
      });
    }
    checkKeys(inner, `${path}/${key}`, depth + 1);
  }
}
