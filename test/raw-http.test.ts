/**
 * The load generator's lean HTTP client (bench/raw-http.ts) against a real Node server: answers of a known length,
 * chunked, ending with the connection, refusals before the body, the client's timeout, and requests waiting for a
 * connection when every one is busy.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { headLines, rawPool } from '../bench/raw-http.ts';

let server: http.Server;
let url: URL;
const seen: { path: string; body: string; key: string | undefined }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = req.url ?? '';
    if (path === '/refuse') {
      // before the body, as the admission gate answers
      res.writeHead(429, { 'content-type': 'application/json', 'content-length': 17 });
      res.end('{"reason":"busy"}');
      return;
    }
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ path, body, key: req.headers['x-key'] as string | undefined });
      if (path === '/chunked') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('part one, ');
        res.end('part two');
      } else if (path === '/close') {
        res.writeHead(202, { connection: 'close', 'content-length': 2 });
        res.end('ok');
      } else if (path === '/slow') {
        setTimeout(() => res.writeHead(200, { 'content-length': 0 }).end(), 300);
      } else if (path === '/never') {
        // no answer: the client gives up
      } else {
        res.writeHead(202, { 'content-length': Buffer.byteLength(body) });
        res.end(body);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

it('posts bodies with their headers and reads each kind of answer, keeping the connection when it may', async () => {
  const pool = rawPool(url, { maxSockets: 4, timeoutMs: 2000, bodyOf: () => true });
  try {
    const head = headLines({ 'content-type': 'application/json', 'x-key': 'k1' });
    const echoed = await pool.post('/echo', head, '{"a":"é"}');
    expect(echoed).toMatchObject({ status: 202, body: '{"a":"é"}', fresh: true });
    expect(seen.at(-1)).toEqual({ path: '/echo', body: '{"a":"é"}', key: 'k1' });
    // the same connection serves the next request
    expect(await pool.post('/chunked', head, 'x')).toMatchObject({ status: 200, fresh: false, connectMs: 0 });
    expect((await pool.post('/refuse', head, 'y'.repeat(4000))).body).toBe('{"reason":"busy"}');
    expect(await pool.post('/echo', head, 'after a refusal')).toMatchObject({ status: 202, body: 'after a refusal' });
    expect(pool.opened()).toBe(1);
    // an answer saying `Connection: close` ends it: the next request opens another
    expect(await pool.post('/close', head, 'z')).toMatchObject({ status: 202, body: 'ok' });
    expect(await pool.post('/echo', head, 'again')).toMatchObject({ status: 202, fresh: true });
    expect(pool.opened()).toBe(2);
    expect(pool.failures).toEqual({});
  } finally {
    pool.close();
  }
});

it('holds requests when every connection is busy, and gives up on one unanswered past its timeout', async () => {
  const pool = rawPool(url, { maxSockets: 2, timeoutMs: 500 });
  try {
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: 4 }, () => pool.post('/slow', '', '')));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(pool.opened()).toBe(2);
    // two rounds of 300 ms on two connections; the last two waited for one
    expect(performance.now() - started).toBeGreaterThanOrEqual(550);
    expect(answers.filter((a) => a.connectMs >= 250)).toHaveLength(2);

    expect(await pool.post('/never', '', '')).toMatchObject({ status: 0, error: 'CLIENT_TIMEOUT' });
    expect(pool.failures).toEqual({ CLIENT_TIMEOUT: 1 });
    // the pool goes on with another connection
    expect(await pool.post('/echo', '', 'still here')).toMatchObject({ status: 202 });
  } finally {
    pool.close();
  }
});
