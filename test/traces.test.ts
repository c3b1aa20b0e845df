/**
 * Traces and logs (issue 69) from the real @sentry/node 10 SDK: a Koa service with tracing and logs on. What the
 * Performance read shows is checked against what the SDK sent (noted by the fixture as it sent it): counts,
 * percentiles within a bucket's width, failures, where the time goes and the N+1 query; the thrown error's event
 * names its trace, and the trace page joins the transaction, its spans, the error and the log lines of that request.
 */
import { expect, it } from 'vitest';
import { boundProject, drained, type TestContext } from './helpers/context.ts';
import { runSentryApp } from './helpers/sentry-app.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['events', 'sessions'], (c) => (ctx = c), { TRACE_SAMPLE_PERCENT: '100' });

interface Sent {
  name: string;
  op: string;
  start: number;
  end: number;
  status: string;
  trace_id: string;
  spans: number;
}

/** The nearest-rank percentile of durations (ms). */
function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

it('@sentry/node 10 with Koa: the Performance page, the N+1 query, and the trace of a thrown error with its log lines', { timeout: 120_000 }, async () => {
  const p = await boundProject(ctx);
  const out = await runSentryApp(ctx, 'sentry-traces.mjs', { publicKey: p.publicKey, id: p.id }, { preload: 'sentry-traces-instrument.mjs' });
  const { flushed, sent } = JSON.parse(out.trim().split('\n').at(-1)!) as { flushed: boolean; sent: Sent[] };
  expect(flushed).toBe(true);
  await drained(ctx);

  const list = await p.get('/performance?range=1h');
  expect(list.status).toBe(200);
  const byName = new Map<string, Sent[]>();
  for (const t of sent) byName.set(t.name, [...(byName.get(t.name) ?? []), t]);
  expect(byName.get('GET /users/:id')).toHaveLength(20);
  for (const [name, txs] of byName) {
    const row = list.body.groups.find((g: { name: string }) => g.name === name);
    expect(row, name).toBeDefined();
    expect(row.count).toBe(txs.length);
    const durations = txs.map((t) => (t.end - t.start) * 1000);
    // a percentile read from the buckets is within a bucket's width (~19%) of the true one
    for (const [q, field] of [
      [0.5, 'p50_ms'],
      [0.95, 'p95_ms'],
    ] as const) {
      const want = percentile(durations, q);
      expect(row[field], `${name} ${field}`).toBeGreaterThan(want / 1.2 - 0.5);
      expect(row[field], `${name} ${field}`).toBeLessThanOrEqual(want * 1.2 + 0.5);
    }
    expect(row.failures).toBe(txs.filter((t) => !['ok', 'cancelled', 'unknown'].includes(t.status)).length);
  }
  const boom = list.body.groups.find((g: { name: string }) => g.name === 'GET /boom');
  expect(boom.failure_rate).toBe(1);

  // where the time of /users/:id goes: its six queries are one parameterised group, an N+1 in every transaction
  const users = list.body.groups.find((g: { name: string }) => g.name === 'GET /users/:id');
  const group = await p.get(`/performance/${users.key}?range=1h`);
  expect(group.status).toBe(200);
  const query = group.body.spans.find((s: { op: string }) => s.op === 'db.query');
  expect(query).toMatchObject({ description: 'SELECT * FROM orders WHERE user_id = %s AND line = %s', count: 120, n_plus_one: 20 });
  expect(group.body.n_plus_one).toHaveLength(1);
  expect(group.body.samples.length).toBeGreaterThan(0);

  // the thrown error's issue: its event names the trace of its request
  const issues = await p.get('/issues?status=unresolved');
  const issue = issues.body.issues.find((i: { title: string }) => i.title.includes('checkout exploded'));
  expect(issue).toBeDefined();
  const detail = await p.get(`/issues/${issue.id}`);
  const traceId = detail.body.latest_event.contexts.trace.trace_id as string;
  expect(byName.get('GET /boom')!.map((t) => t.trace_id)).toContain(traceId);

  const trace = await p.get(`/traces/${traceId}`);
  expect(trace.status).toBe(200);
  expect(trace.body.sampled).toBe(true);
  expect(trace.body.transactions).toHaveLength(1);
  expect(trace.body.transactions[0]).toMatchObject({ name: 'GET /boom', failed: true });
  expect(trace.body.errors).toEqual([expect.objectContaining({ id: detail.body.latest_event.event_id, issue: Number(issue.id) })]);
  expect(trace.body.logs).toEqual([expect.objectContaining({ level: 'warn', body: 'checkout about to fail', trace_id: traceId })]);

  // a /users/:id request's trace: its transaction with the six queries and the outgoing call as spans, and its line
  const usersTrace = (await p.get(`/traces/${byName.get('GET /users/:id')![0]!.trace_id}`)).body;
  const ops = usersTrace.transactions.flatMap((t: { spans: { op: string }[] }) => t.spans.map((sp) => sp.op));
  expect(ops.filter((op: string) => op === 'db.query')).toHaveLength(6);
  expect(ops).toContain('http.client');
  expect(usersTrace.logs).toEqual([expect.objectContaining({ body: expect.stringMatching(/^loading user \d+$/) })]);

  // the log lines: one per /users/:id request, each with its trace; searched by text and attribute
  const logs = await p.get('/logs?range=1h&q=loading%20user&attribute=route%3Dusers');
  expect(logs.body.lines).toHaveLength(20);
  expect(new Set(logs.body.lines.map((l: { trace_id: string }) => l.trace_id)).size).toBe(20);
});
