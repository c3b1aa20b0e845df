/**
 * Reads a request body: media type, size limit, Content-Encoding, the store
 * endpoint's encodings; its JSON is parsed by src/util/json.ts. Each problem
 * has its own 4xx, and nothing is written before this passes.
 */
import type { Context } from 'koa';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import busboy from 'busboy';
import getRawBody from 'raw-body';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.ts';
import { parseJson } from '../util/json.ts';
import type { AppState } from './state.ts';

/** Whether the client of a request has gone (closed its connection): what it sent is then not written. */
export function clientGone(ctx: Context): () => boolean {
  return () => ctx.req.socket.destroyed;
}

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

/**
 * The body's bytes. An ingest request then waits for its turn of the thread (`ctx.state.turn`, src/util/turns.ts)
 * before anything parses it: what was read meanwhile is answered first.
 */
async function readRaw(ctx: Context, limit: number): Promise<Buffer> {
  try {
    const body = await getRawBody(ctx.req, { limit, length: ctx.get('content-length') || undefined });
    const turn = (ctx.state as AppState).turn;
    if (turn) await turn();
    return body;
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') throw new PayloadTooLargeError(limit);
    if (type === 'request.size.invalid') throw new BadRequestError('bad_length', 'the body length does not match Content-Length');
    if (type === 'request.aborted') throw new BadRequestError('aborted', 'the client aborted the request');
    throw err;
  }
}

/** The files of a `multipart/form-data` body (read whole first, within `limit`): each part's field, file name and bytes. */
export async function readMultipartFiles(ctx: Context, limit: number): Promise<{ field: string; filename: string; data: Buffer }[]> {
  if (!/^multipart\/form-data\s*;/i.test(ctx.get('content-type'))) throw new UnsupportedMediaTypeError(['multipart/form-data']);
  const raw = await readRaw(ctx, limit);
  return new Promise((resolve, reject) => {
    const files: { field: string; filename: string; data: Buffer }[] = [];
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: ctx.req.headers, limits: { fileSize: limit, parts: 1000 } });
    } catch (err) {
      return reject(new BadRequestError('invalid_multipart', (err as Error).message));
    }
    parser.on('file', (field, stream, info) => {
      const parts: Buffer[] = [];
      stream.on('data', (d: Buffer) => parts.push(d));
      stream.on('end', () => files.push({ field, filename: info.filename ?? '', data: Buffer.concat(parts) }));
    });
    parser.on('close', () => resolve(files));
    parser.on('error', (err) => reject(new BadRequestError('invalid_multipart', `the multipart body could not be read: ${(err as Error).message}`)));
    parser.end(raw);
  });
}
