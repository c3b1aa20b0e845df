/**
 * Reads and parses a request body: media type, size limit, JSON syntax and
 * keys that a document store would interpret ($-prefixed, dotted,
 * __proto__), each with its own 4xx. Nothing is written before this passes.
 */
import type { Context } from 'koa';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import getRawBody from 'raw-body';
import { wellFormed } from '../domain/client-keys.ts';
import { repairPythonJson } from '../domain/event-repairs.ts';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.ts';

const MAX_DEPTH = 32;

export async function readJson(
  ctx: Context,
  limit: number,
  mediaTypes: readonly string[] = ['application/json'],
  keys = true,
): Promise<unknown> {
  const type = (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase();
  if (!mediaTypes.includes(type)) throw new UnsupportedMediaTypeError([...mediaTypes]);
  return parseJson(await readText(ctx, limit), 'the body', keys);
}

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

export async function readText(ctx: Context, limit: number): Promise<string> {
  const encoding = ctx.get('content-encoding');
  if (encoding && encoding.toLowerCase() !== 'identity') {
    throw new BadRequestError('unsupported_encoding', 'Content-Encoding is not supported; send the body uncompressed');
  }
  return (await readRaw(ctx, limit)).toString('utf8');
}

const inflateZlib = promisify(zlib.inflate);
const inflateRaw = promisify(zlib.inflateRaw);
const INFLATE: Record<string, (buf: Buffer, opts: zlib.ZlibOptions) => Promise<Buffer>> = {
  gzip: promisify(zlib.gunzip),
  'x-gzip': promisify(zlib.gunzip),
  // zlib as the standard says, or raw deflate as some clients send it (Relay and GlitchTip try both)
  deflate: (buf, opts) => inflateZlib(buf, opts).catch((err: unknown) => ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' ? Promise.reject(err) : inflateRaw(buf, opts))),
  br: promisify(zlib.brotliDecompress),
};
/** Content-Encoding values that mean none: sentry-ruby sends an empty one, others a charset (Relay ignores both). */
const NO_ENCODING = new Set(['', 'identity', 'utf-8', 'utf8']);

/**
 * The body as bytes, decompressed when Content-Encoding is gzip, deflate or
 * br (Sentry SDKs gzip large envelopes). `limit` applies to both the bytes
 * received and the bytes after decompression.
 */
export async function readBytes(ctx: Context, limit: number): Promise<Buffer> {
  const encoding = ctx.get('content-encoding').trim().toLowerCase();
  const raw = await readRaw(ctx, limit);
  if (NO_ENCODING.has(encoding)) return raw;
  const inflate = INFLATE[encoding];
  if (!inflate) throw new BadRequestError('unsupported_encoding', `Content-Encoding ${encoding} is not supported; use gzip, deflate, br or none`);
  try {
    return await inflate(raw, { maxOutputLength: limit });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new PayloadTooLargeError(limit);
    throw new BadRequestError('bad_encoding', `the body is not valid ${encoding} data`);
  }
}

/**
 * A store endpoint's body (already inflated per Content-Encoding) as text: JSON as it is; base64 of JSON or of
 * zlib-deflated JSON, as the raven clients send it (`application/octet-stream`); zlib without base64. `limit`
 * bounds what inflating makes.
 */
export function storeText(body: Buffer, limit: number): string {
  let data = body;
  const start = data.subarray(0, 64).toString('latin1').trimStart();
  if (!start.startsWith('{') && !start.startsWith('[')) {
    const compact = data.toString('latin1').replace(/\s+/g, '');
    if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(compact)) data = Buffer.from(compact, 'base64');
    if (data[0] === 0x78) {
      try {
        data = zlib.inflateSync(data, { maxOutputLength: limit });
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new PayloadTooLargeError(limit);
        throw new BadRequestError('bad_encoding', 'the body is neither JSON nor base64 of (zlib-deflated) JSON');
      }
    }
  }
  return data.toString('utf8');
}

async function readRaw(ctx: Context, limit: number): Promise<Buffer> {
  try {
    return await getRawBody(ctx.req, { limit, length: ctx.get('content-length') || undefined });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') throw new PayloadTooLargeError(limit);
    if (type === 'request.size.invalid') throw new BadRequestError('bad_length', 'the body length does not match Content-Length');
    if (type === 'request.aborted') throw new BadRequestError('aborted', 'the client aborted the request');
    throw err;
  }
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
