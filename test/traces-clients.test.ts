/**
 * Traces from real Sentry clients nobody here wrote (issue 69): Debian's sentry-python 1.9 (RFC 3339 times with
 * microseconds, no `sampled` in its trace header), sentry-go (nanoseconds, EnableTracing) and @sentry/browser 10
 * in Chromium (a page-load with its web vitals, and INP sent on its own when the page is hidden). What each
 * Performance row shows is checked against what the client sent (each client notes it as it sends), and an error
 * captured inside a transaction leads to its trace.
 */
import esbuild from 'esbuild';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { boundProject, drained, type TestContext } from './helpers/context.ts';
import { answers, CLIENT_SOURCES, ensureDebian, ensureNpm, goBuild, runClient } from './helpers/real-clients.ts';
import { until } from './helpers/until.ts';
import { withWorkers } from './helpers/with-workers.ts';
import { groupBy } from '../src/util/group-by.ts';

let ctx: TestContext;
withWorkers(['events', 'sessions'], (c) => (ctx = c), { TRACE_SAMPLE_PERCENT: '100' });

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const PYTHON = '/usr/bin/python3';

interface Sent {
  name: string;
  start: number | string;
  end: number | string;
  status: string | null;
  trace_id: string;
}
const seconds = (t: number | string) => (typeof t === 'number' ? t : Date.parse(t) / 1000);
const percentile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.max(0, Math.ceil(q * values.length) - 1)]!;

async function project() {
  const p = await boundProject(ctx);
  return { ...p, dsn: `http://${p.publicKey}@${new URL(ctx.api).host}/${p.id}` };
}

/** The Performance rows match what was sent: counts, failures, p50 and p95 within a bucket's width. */
async function expectRows(p: Awaited<ReturnType<typeof project>>, sent: Sent[]) {
  await drained(ctx);
  const { groups } = (await p.get('/performance?range=1h')).body;
  const byName = groupBy(sent, (t) => t.name);
  expect(groups.map((g: { name: string }) => g.name).sort()).toEqual([...byName.keys()].sort());
  for (const [name, txs] of byName) {
    const row = groups.find((g: { name: string }) => g.name === name);
    const durations = txs.map((t) => (seconds(t.end) - seconds(t.start)) * 1000);
    expect(row.count, name).toBe(txs.length);
    expect(row.failures, name).toBe(txs.filter((t) => t.status && !['ok', 'cancelled', 'unknown'].includes(t.status)).length);
    for (const [q, field] of [
      [0.5, 'p50_ms'],
      [0.95, 'p95_ms'],
    ] as const) {
      expect(row[field], `${name} ${field}`).toBeGreaterThan(percentile(durations, q) / 1.2 - 0.5);
      expect(row[field], `${name} ${field}`).toBeLessThanOrEqual(percentile(durations, q) * 1.2 + 0.5);
    }
  }
  return groups;
}

/** The one issue's latest event leads to its trace: the failed transaction and the error in it. */
async function expectTraceOfIssue(p: Awaited<ReturnType<typeof project>>, sent: Sent[], failed: string) {
  await until(async () => (await p.get('/issues')).body.total >= 1, 30_000);
  const [issue] = (await p.get('/issues')).body.issues;
  const event = (await p.get(`/issues/${issue.id}`)).body.latest_event;
  const traceId = event.contexts.trace.trace_id;
  expect(sent.find((t) => t.name === failed)!.trace_id).toBe(traceId);
  const trace = (await p.get(`/traces/${traceId}`)).body;
  expect(trace.transactions).toEqual([expect.objectContaining({ name: failed, failed: true })]);
  expect(trace.errors).toEqual([expect.objectContaining({ id: event.event_id, issue: Number(issue.id) })]);
}

describe("Debian's sentry-python 1.9", () => {
  beforeAll(() => ensureDebian(['python3-sentry-sdk'], () => answers(PYTHON, ['-c', 'import sentry_sdk'])), 600_000);

  it('transactions with traces_sample_rate=1.0: counts and percentiles, and the trace of an error captured in one', async () => {
    const p = await project();
    const out = await runClient(PYTHON, [path.join(CLIENT_SOURCES, 'python-client.py'), p.dsn, 'traces', 'py-traces']);
    const sent = JSON.parse(out.trim().split('\n').at(-1)!) as Sent[];
    expect(sent).toHaveLength(13);
    expect(typeof sent[0]!.start).toBe('string'); // RFC 3339 with microseconds
    await expectRows(p, sent);
    await expectTraceOfIssue(p, sent, 'charge-card');
  });
});

describe('sentry-go 0.40', () => {
  let binary = '';
  beforeAll(() => {
    binary = goBuild('go-client');
  }, 600_000);

  it('transactions with EnableTracing: counts and percentiles, and the trace of an error captured in one', async () => {
    const p = await project();
    const out = await runClient(binary, [p.dsn, 'traces', 'go-traces']);
    const sent = JSON.parse(out.trim().split('\n').at(-1)!) as Sent[];
    expect(sent).toHaveLength(11);
    expect(String(sent[0]!.start)).toMatch(/\.\d{7,9}/); // nanoseconds
    const groups = await expectRows(p, sent);
    // the query of each transaction is one parameterised span group
    const orders = groups.find((g: { name: string }) => g.name === 'GET /orders/{id}');
    const group = (await p.get(`/performance/${orders.key}?range=1h`)).body;
    expect(group.spans).toEqual([expect.objectContaining({ op: 'db.query', description: 'SELECT * FROM orders WHERE id = %s', count: 10 })]);
    await expectTraceOfIssue(p, sent, 'POST /checkout');
  });
});

describe('@sentry/browser 10 in Chromium', () => {
  let bundle = '';
  beforeAll(async () => {
    const dir = ensureNpm('@sentry/browser', '@sentry/browser@10');
    const built = await esbuild.build({ entryPoints: [path.join(CLIENT_SOURCES, 'browser-traces.mjs')], bundle: true, format: 'esm', write: false, nodePaths: [path.join(dir, 'node_modules')], logLevel: 'silent' });
    bundle = built.outputFiles[0]!.text;
  }, 600_000);

  it('the page-load with LCP, FCP, CLS and TTFB, and INP sent when the page is hidden', async () => {
    const p = await project();
    const page = http.createServer((req, res) => {
      if (req.url?.startsWith('/app.js')) res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
      else res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>item</title><h1>A fine teapot</h1><p>Brews tea.</p><button id="buy">Add to cart</button><script type="module" src="/app.js"></script>');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    let browser: Awaited<ReturnType<typeof chromium.launch>> | undefined;
    let sent: { name: string; op: string; measurements: Record<string, { value: number }> }[] = [];
    try {
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
      const tab = await browser.newPage();
      await tab.goto(`http://127.0.0.1:${(page.address() as AddressInfo).port}/shop/item/42?dsn=${encodeURIComponent(p.dsn)}`);
      // the banner's shift and the largest paint first: a click before them keeps them out of CLS and LCP
      await tab.waitForFunction(() => {
        const seen = window as unknown as { shifted: boolean; painted: boolean };
        return seen.shifted && seen.painted;
      }, undefined, { timeout: 10_000 });
      await tab.click('#buy');
      await tab.waitForFunction(() => (window as unknown as { sent: unknown[] }).sent.length > 0, undefined, { timeout: 20_000 });
      sent = await tab.evaluate(() => (window as unknown as { sent: typeof sent }).sent);
      // hidden: the SDK sends the interaction's INP as a span of its own
      await tab.goto('about:blank');
      await until(async () => {
        await drained(ctx);
        const pages = (await p.get('/vitals?range=1h')).body.pages as { vitals: Record<string, unknown> }[];
        return pages.some((pg) => pg.vitals.inp !== undefined);
      }, 20_000);
    } finally {
      await browser?.close();
      page.close();
    }
    const pageload = sent.find((t) => t.op === 'pageload')!;
    expect(pageload.name).toBe('/shop/item/42');
    const { pages } = (await p.get('/vitals?range=1h')).body;
    expect(pages).toHaveLength(1);
    expect(pages[0].page).toBe('/shop/item/*');
    for (const vital of ['lcp', 'fcp', 'ttfb', 'cls'] as const) {
      const value = pageload.measurements[vital]!.value;
      const shown = pages[0].vitals[vital];
      expect(shown, vital).toMatchObject({ count: 1 });
      // one value: its p75 is it, within its bucket
      expect(shown.p75, vital).toBeGreaterThanOrEqual(value / 1.2 - 0.001);
      expect(shown.p75, vital).toBeLessThanOrEqual(value * 1.2 + 0.001);
    }
    expect(pages[0].vitals.cls.p75).toBeGreaterThan(0);
    expect(pages[0].vitals.inp).toMatchObject({ count: 1 });
    expect(pages[0].vitals.inp.p75).toBeGreaterThanOrEqual(100);
  }, 90_000);
});
