/**
 * bench:storm's load generator (tools/loadgen, run by bench/loadgen.ts) against a real Node server: it sends each
 * sender's native events and envelopes on the plan's timetable with fresh event_ids, reads answers and refusals
 * (their reasons), reports its phases as they start, and gives up on a request the server never answers.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadgenBinary, runLoad, type LoadPlan, type LoadSender } from '../bench/loadgen.ts';
import { headLines } from '../bench/raw-http.ts';

let server: http.Server;
let url: string;
const seen: { path: string; key: string; body: string }[] = [];

beforeAll(async () => {
  loadgenBinary(); // built once, before any test's clock runs
  server = http.createServer((req, res) => {
    const key = String(req.headers['x-key']);
    if (key === 'refuse') {
      // before the body, as the admission gate answers
      res.writeHead(429, { 'content-type': 'application/json', connection: 'close' });
      res.end('{"reason":"queue_delay","message":"shed"}');
      return;
    }
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', key, body });
      if (key === 'never') return;
      res.writeHead(202, { 'content-type': 'application/json' }); // chunked
      res.end('{"id":"x"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const ID = '0'.repeat(32);
const sender = (key: string): LoadSender => ({
  native_head: headLines({ 'content-type': 'application/json', 'x-key': key }),
  envelope_path: '/api/7/envelope/',
  envelope_head: headLines({ 'content-type': 'application/x-sentry-envelope', 'x-key': key }),
  templates: [JSON.stringify({ message: 'é one', event_id: ID }), JSON.stringify({ message: 'two', event_id: ID })],
});

it('sends every sender its timetable, native events and envelopes with fresh ids, and reads answers and refusals', async () => {
  const plan: LoadPlan = { url, max_sockets: 8, timeout_ms: 5000, seq_start: 100, senders: [sender('k0'), sender('refuse')], phases: [{ seconds: 0.5, rates: [40, 20] }, { seconds: 0.5, rates: [20, 0] }] };
  const phases: number[] = [];
  const started = performance.now();
  const { records, lateP99Ms } = await runLoad(plan, (n, pid) => {
    expect(pid).toBeGreaterThan(0);
    phases.push(n);
  });
  expect(performance.now() - started).toBeGreaterThanOrEqual(1000);
  expect(phases).toEqual([0, 1, 2]);
  expect(lateP99Ms).toHaveLength(2);
  const count = (phase: number, from: number) => records.filter((r) => r.phase === phase && r.from === from).length;
  expect([count(0, 0), count(0, 1), count(1, 0), count(1, 1)]).toEqual([20, 10, 10, 0]);
  // due on the timetable: request k of a sender at k / rate into its phase
  expect(records.filter((r) => r.from === 0 && r.phase === 1).map((r) => r.due)).toEqual(Array.from({ length: 10 }, (_, k) => 500 + k * 50));
  for (const r of records.filter((x) => x.from === 0)) expect(r).toMatchObject({ status: 202, reason: '' });
  for (const r of records.filter((x) => x.from === 1)) expect(r).toMatchObject({ status: 429, reason: 'queue_delay' });
  // every request answered after it was due, and had a connection
  expect(records.every((r) => r.ms >= 0 && r.connectMs >= 0)).toBe(true);
  expect(records.filter((r) => r.fresh).length).toBeGreaterThan(0);

  const got = seen.filter((s) => s.key === 'k0');
  expect(got).toHaveLength(30);
  const ids = got.map((s) => {
    if (s.path === '/api/v1/events') return (JSON.parse(s.body) as { event_id: string }).event_id;
    expect(s.path).toBe('/api/7/envelope/');
    const [head, item, payload, end] = s.body.split('\n');
    expect(end).toBe('');
    expect(JSON.parse(item!)).toEqual({ type: 'event', length: Buffer.byteLength(payload!) });
    const id = (JSON.parse(payload!) as { event_id: string }).event_id;
    expect(JSON.parse(head!)).toEqual({ event_id: id });
    return id;
  });
  expect(new Set(ids).size).toBe(30);
  // numbered after seq_start, so that the runs of one benchmark never repeat an id
  expect(ids.every((id) => /^[0-9a-f]{32}$/.test(id) && parseInt(id, 16) > 100 && parseInt(id, 16) <= 100 + records.length)).toBe(true);
  expect(got.some((s) => s.path === '/api/v1/events') && got.some((s) => s.path !== '/api/v1/events')).toBe(true);
});

it('gives up on a request never answered, as an SDK does', async () => {
  const plan: LoadPlan = { url, max_sockets: 2, timeout_ms: 300, seq_start: 0, senders: [sender('never')], phases: [{ seconds: 0.2, rates: [10] }] };
  const { records } = await runLoad(plan, () => {});
  expect(records).toHaveLength(2);
  for (const r of records) expect(r).toMatchObject({ status: 0, reason: 'CLIENT_TIMEOUT' });
  expect(records.every((r) => r.ms >= 300)).toBe(true);
});

it('fails clearly on a server that is not there', async () => {
  const plan: LoadPlan = { url: 'http://127.0.0.1:1', max_sockets: 2, timeout_ms: 300, seq_start: 0, senders: [sender('k0')], phases: [{ seconds: 0.1, rates: [20] }] };
  const { records } = await runLoad(plan, () => {});
  expect(records).toHaveLength(2);
  for (const r of records) expect(r).toMatchObject({ status: 0, reason: 'ECONNREFUSED' });
  expect(records.every((r) => Number.isNaN(r.connectMs))).toBe(true);
});
