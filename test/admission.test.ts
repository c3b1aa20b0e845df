/**
 * Error storms (issue 51), against the real API, workers, Redis and FerretDB: a project over its quota is refused
 * with 429, Retry-After and X-Sentry-Rate-Limits while another project is served; the real sentry-go and
 * @sentry/node SDKs stop sending for the limit's duration (counted at a proxy in front of Lookout); spike
 * protection holds a project and notifies once; each inbound filter drops its case and counts it; a busy process
 * (a deep queue) and a disk under its floor refuse before reading the body, and nothing acknowledged is lost.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkers } from '../workers/main.ts';
import { boundProject, call, drained, eventId, startTestContext, type TestContext } from './helpers/context.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { goBuild, runClient } from './helpers/real-clients.ts';
import { until } from './helpers/until.ts';
import { withWorkers } from './helpers/with-workers.ts';

const error = (value: string, extra: Record<string, unknown> = {}) => ({
  event_id: eventId(),
  timestamp: new Date().toISOString(),
  level: 'error',
  exception: { values: [{ type: 'CartError', value, stacktrace: { frames: [{ abs_path: 'https://shop.example/app.js', function: 'addToCart', lineno: 3 }] } }] },
  ...extra,
});
const attempt = () => ({ event_id: eventId(), timestamp: new Date().toISOString(), security: { kind: 'login_failed', actor: 'ana', ip: '203.0.113.9', outcome: 'failure' } });

type Project = Awaited<ReturnType<typeof boundProject>>;
/** A project's Sentry endpoints: its DSN (at `host`, the API's unless given) and a store call with its key. */
function sentryOf(ctx: TestContext, p: Project, host = new URL(ctx.api).host) {
  return {
    dsn: `http://${p.publicKey}@${host}/${p.id}`,
    store: (body: unknown) => call(ctx, 'POST', `/api/${p.id}/store/`, { body, headers: { 'x-sentry-auth': `Sentry sentry_version=7, sentry_key=${p.publicKey}` } }),
  };
}
/** Waits out the last seconds of a minute, so a test's requests against a per-minute quota share one window. */
async function awayFromMinuteEnd(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 15_000) await new Promise((r) => setTimeout(r, left + 50));
}
const storedErrors = (ctx: TestContext, p: Project) => ctx.runtime.stores.events.collection.countDocuments({ project_id: p.id });
const ingestion = async (ctx: TestContext, p: Project) => (await call(ctx, 'GET', '/api/v1/ingestion', { key: p.secret, instance: p.instance })).body;
const droppedFor = (counts: { dropped: { type: string; reason: string; count: number }[] }, reason: string) =>
  counts.dropped.filter((d) => d.reason === reason).reduce((n, d) => n + d.count, 0);

describe('quotas, spike protection and inbound filters', () => {
  let ctx: TestContext;
  let receiver: Receiver;
  withWorkers(['events', 'sessions', 'notifications'], (c) => (ctx = c), { SPIKE_FLOOR_PER_MINUTE: '60', WEBHOOK_ALLOW_PRIVATE: 'true' });
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  it("a project over its quota is refused with 429 and X-Sentry-Rate-Limits; another project's events are taken; sign-in attempts never count", { timeout: 60_000 }, async () => {
    const [busy, calm] = [await boundProject(ctx), await boundProject(ctx)];
    await ctx.runtime.admin.setProject(busy.id, { quotas: { events_per_minute: 3 } });
    await awayFromMinuteEnd();
    const s = sentryOf(ctx, busy);
    for (let i = 0; i < 3; i++) expect((await s.store(error(`within the quota ${i}`))).status).toBe(200);
    const over = await s.store(error('over the quota'));
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ reason: 'quota_minute', retry_after: expect.any(Number) });
    const seconds = Number(over.headers.get('retry-after'));
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(over.headers.get('x-sentry-rate-limits')).toBe(`${seconds}:error;default;security:project:quota_minute`);
    // the native endpoint: an error event is refused, a sign-in attempt is taken
    expect((await busy.send(error('native, over the quota'))).status).toBe(429);
    expect((await busy.send(attempt())).status).toBe(202);
    // the other project is served as usual
    for (let i = 0; i < 5; i++) expect((await sentryOf(ctx, calm).store(error(`calm ${i}`))).status).toBe(200);
    await drained(ctx);
    expect(await storedErrors(ctx, busy)).toBe(3);
    await ctx.runtime.ingestStats.flush();
    const counts = await ingestion(ctx, busy);
    expect(droppedFor(counts, 'quota_minute')).toBe(2);
    expect(counts.accepted).toMatchObject({ event: 3, security: 1 });
    const metrics = await (await fetch(`${ctx.api}/metrics`)).text();
    expect(metrics).toMatch(/lookout_ingest_refused_total\{route="store",reason="quota_minute"[^}]*\} 1/);
  });

  it('sessions have their own quota', { timeout: 60_000 }, async () => {
    const p = await boundProject(ctx);
    await ctx.runtime.admin.setProject(p.id, { quotas: { sessions_per_minute: 2 } });
    const sessions = (n: number) => ({ sessions: Array.from({ length: n }, (_, i) => ({ sid: `${eventId()}`, started: new Date().toISOString(), status: 'ok', release: 'shop@1', did: `u${i}` })) });
    const post = (body: unknown) => call(ctx, 'POST', '/api/v1/sessions', { key: p.publicKey, body });
    await awayFromMinuteEnd();
    expect((await post(sessions(2))).status).toBe(202);
    const over = await post(sessions(1));
    expect(over.status).toBe(429);
    expect(over.body.reason).toBe('quota_minute');
    // error events are not held by the sessions' quota
    expect((await p.send(error('an error beside the sessions'))).status).toBe(202);
  });

  it('spike protection holds a project to its ceiling and notifies once', async () => {
    const p = await boundProject(ctx);
    await ctx.runtime.notifications.add(p.id, { webhook: `${receiver.url}/hook/${p.id}`, on: ['project.spike'] });
    // the floor set for this test: 60 a minute, so 10 in a spike window of 10 s
    const s = sentryOf(ctx, p);
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await s.store(error(`spike ${i}`))).status);
    const refused = statuses.filter((st) => st === 429).length;
    expect(statuses.filter((st) => st === 200).length).toBeGreaterThanOrEqual(10);
    expect(refused).toBeGreaterThanOrEqual(10);
    await until(async () => receiver.of('project.spike').length >= 1, 20_000);
    const notice = receiver.of('project.spike')[0]!.body;
    expect(notice).toMatchObject({ event: 'project.spike', ceiling_per_minute: 60, project: { id: String(p.id) } });
    const counts = await ingestion(ctx, p);
    expect(counts.spike).toMatchObject({ ceiling_per_10s: 10, refused: expect.any(Number) });
    // more refusals in the same spike: no second notification
    for (let i = 0; i < 10; i++) await s.store(error(`still spiking ${i}`));
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.of('project.spike')).toHaveLength(1);
  });

  it('each inbound filter drops its case, counts it, and stores nothing of it', async () => {
    const p = await boundProject(ctx);
    await ctx.runtime.admin.setProject(p.id, {
      filters: { browser_extensions: true, localhost: true, legacy_browsers: true, releases: ['*-dev'], error_messages: ['*ResizeObserver loop*'] },
    });
    const s = sentryOf(ctx, p);
    const cases: [string, Record<string, unknown>][] = [
      ['browser_extensions', error('boom', { exception: { values: [{ type: 'Error', value: 'boom', stacktrace: { frames: [{ abs_path: 'chrome-extension://abc/content.js' }] } }] } })],
      ['localhost', error('boom', { request: { url: 'http://localhost:8069/web' } })],
      ['legacy_browsers', error('boom', { request: { url: 'https://shop.example/', headers: { 'User-Agent': 'Mozilla/5.0 (Windows NT 10.0; Trident/7.0; rv:11.0) like Gecko' } } })],
      ['release', error('boom', { release: 'shop@2.0-dev' })],
      ['error_message', error('ResizeObserver loop limit exceeded')],
    ];
    for (const [, body] of cases) expect((await s.store(body)).status).toBe(200);
    const native = await p.send(error('from the native endpoint', { release: 'erp@17-dev' }));
    expect(native).toMatchObject({ status: 202, body: { filtered: 'release' } });
    expect((await s.store(error('a real problem', { release: 'shop@2.0' }))).status).toBe(200);
    await drained(ctx);
    expect(await storedErrors(ctx, p)).toBe(1);
    const issues = (await p.get('/issues')).body.issues;
    expect(issues.map((i: { title: string }) => i.title)).toEqual(['CartError: a real problem']);
    await ctx.runtime.ingestStats.flush();
    const counts = await ingestion(ctx, p);
    for (const [filter] of cases) expect(droppedFor(counts, `filtered_${filter}`)).toBe(filter === 'release' ? 2 : 1);
  });
});

/** A proxy in front of the API that counts the requests reaching it, by path. */
async function countingProxy(target: string) {
  const seen: { path: string; status: number }[] = [];
  const server = http.createServer((req, res) => {
    const upstream = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      seen.push({ path: req.url ?? '', status: answer.statusCode ?? 0 });
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    host: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

describe('real SDKs honour X-Sentry-Rate-Limits', () => {
  let ctx: TestContext;
  withWorkers(['events'], (c) => (ctx = c));

  /** Five errors sent in turn by a client, through a counting proxy, to a project taking one a minute. */
  async function storm(send: (dsn: string) => Promise<unknown>) {
    const p = await boundProject(ctx);
    await ctx.runtime.admin.setProject(p.id, { quotas: { events_per_minute: 1 } });
    const proxy = await countingProxy(ctx.api);
    await awayFromMinuteEnd();
    try {
      await send(sentryOf(ctx, p, proxy.host).dsn);
      return proxy.seen.filter((r) => /\/(envelope|store)\//.test(r.path)).map((r) => r.status);
    } finally {
      await proxy.close();
    }
  }

  it('sentry-go sends nothing more after the 429 until the limit ends', async () => {
    const binary = goBuild('go-client');
    // the first error is taken, the second refused with the limit; the SDK drops the last three itself
    expect(await storm((dsn) => runClient(binary, [dsn, 'storm', 'go-storm']))).toEqual([200, 429]);
  }, 600_000);

  it('@sentry/node 10 sends nothing more after the 429 until the limit ends', async () => {
    const app = fileURLToPath(new URL('./fixtures/sentry-storm.mjs', import.meta.url));
    const run = (dsn: string) =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, [app], { env: { ...process.env, LOOKOUT_DSN: dsn }, stdio: ['ignore', 'pipe', 'pipe'] });
        let text = '';
        child.stdout.on('data', (d) => (text += d));
        child.stderr.on('data', (d) => (text += d));
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`sentry-storm exited ${code}: ${text}`))));
      });
    expect(await storm(run)).toEqual([200, 429]);
  }, 90_000);
});

describe('a burst an idle Lookout can absorb is taken whole, with admission as shipped', () => {
  let ctx: TestContext;
  // the defaults of config/index.ts, not the test helper's lenient ones
  withWorkers(['events'], (c) => (ctx = c), { ADMIT_BUFFER_ITEMS: '2500', ADMIT_MAX_STALL_MS: '10000', ADMIT_TARGET_DELAY_MS: '250', ADMIT_MAX_QUEUE_DEPTH: '2000' });

  it('@sentry/node 10 capturing 300 errors at once: no 429, every event stored', async () => {
    const p = await boundProject(ctx);
    const proxy = await countingProxy(ctx.api);
    const app = fileURLToPath(new URL('./fixtures/sentry-burst.mjs', import.meta.url));
    try {
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, [app], { env: { ...process.env, LOOKOUT_DSN: sentryOf(ctx, p, proxy.host).dsn }, stdio: ['ignore', 'pipe', 'pipe'] });
        let text = '';
        child.stdout.on('data', (d) => (text += d));
        child.stderr.on('data', (d) => (text += d));
        child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`sentry-burst exited ${code}: ${text}`))));
      });
      expect(out).toContain('"flushed":true');
      const statuses = proxy.seen.filter((r) => /\/envelope\//.test(r.path)).map((r) => r.status);
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      expect(statuses).toHaveLength(300);
    } finally {
      await proxy.close();
    }
    await drained(ctx);
    expect(await storedErrors(ctx, p)).toBe(300);
  }, 120_000);
});

describe('a busy process refuses before reading the body, and loses nothing it acknowledged', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    // no workers yet: every group of events waits in the queue, one job each
    ctx = await startTestContext({ ADMIT_MAX_QUEUE_DEPTH: '2' });
  });
  afterAll(async () => {
    await ctx.close();
  });

  it('429 with Retry-After on the Sentry routes, 503 on the native one; processed once workers come', async () => {
    const p = await boundProject(ctx);
    const s = sentryOf(ctx, p);
    const taken: string[] = [];
    for (let i = 0; i < 3; i++) {
      const body = error(`before the queue filled ${i}`);
      expect((await s.store(body)).status).toBe(200);
      taken.push(body.event_id);
    }
    // the queue's depth is sampled every second
    let refused: Awaited<ReturnType<typeof call>> | undefined;
    await until(async () => {
      const res = await s.store(error('while the queue is deep'));
      if (res.status === 200) taken.push(res.body.id);
      else refused = res;
      return res.status === 429;
    }, 10_000);
    expect(refused!.body).toMatchObject({ reason: 'queue_depth', retry_after: 5 });
    expect(refused!.headers.get('retry-after')).toBe('5');
    expect(refused!.headers.get('x-sentry-rate-limits')).toBe('5::organization:queue_depth');
    const native = await p.send(attempt());
    expect(native.status).toBe(503);
    expect(native.headers.get('retry-after')).toBe('5');
    // a refusal does not read the body: one far over the body limit is refused all the same
    const huge = await fetch(`${ctx.api}/api/${p.id}/store/?sentry_key=${p.publicKey}`, { method: 'POST', body: 'x'.repeat(4 * 1024 * 1024), headers: { 'content-type': 'application/json' } });
    expect(huge.status).toBe(429);
    // a browser SDK can read it: CORS, with the rate-limit headers exposed
    const browser = await fetch(`${ctx.api}/api/${p.id}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body: '{}\n', headers: { origin: 'https://shop.example' } });
    expect(browser.status).toBe(429);
    expect(browser.headers.get('access-control-allow-origin')).toBe('*');
    expect(browser.headers.get('access-control-expose-headers')).toMatch(/X-Sentry-Rate-Limits/);
    expect(browser.headers.get('access-control-expose-headers')).toMatch(/Retry-After/);
    // every refusal is counted by route and reason, and in the project's ingestion (a second at a time)
    await until(async () => {
      const metrics = await (await fetch(`${ctx.api}/metrics`)).text();
      const counted = (route: string) => Number(new RegExp(`lookout_ingest_refused_total\\{[^}]*route="${route}"[^}]*reason="queue_depth"[^}]*\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
      return counted('store') >= 2 && counted('events') >= 1 && counted('envelope') >= 1;
    }, 10_000);
    await until(async () => droppedFor(await ingestion(ctx, p), 'queue_depth') >= 4, 10_000);

    const workers = await startWorkers(ctx.runtime, { queues: ['events'] });
    try {
      await drained(ctx);
      expect(await storedErrors(ctx, p)).toBe(taken.length);
      const issues = (await p.get('/issues')).body.issues;
      expect(issues.reduce((n: number, i: { event_count: number }) => n + i.event_count, 0)).toBe(taken.length);
    } finally {
      await workers.close();
    }
  }, 60_000);
});

describe('a standing queue is shed from the project that sends it, and all is taken again once it drains', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    // a small target, interval and buffer, so that a flood from a test stands as a storm's queue would; keys cached as in
    // production: a project's keys are one sender
    ctx = await startTestContext({ ADMIT_TARGET_DELAY_MS: '20', ADMIT_INTERVAL_MS: '200', ADMIT_BUFFER_ITEMS: '300', KEY_CACHE_SECONDS: '5' });
  });
  afterAll(async () => {
    await ctx.close();
  });

  it('429 queue_delay with Retry-After and X-Sentry-Rate-Limits under a flood; a calm project served; taken again after it', async () => {
    const [p, calm] = [await boundProject(ctx), await boundProject(ctx)];
    const s = sentryOf(ctx, p);
    // the calm project was sending before the flood (this process knows its key)
    expect((await sentryOf(ctx, calm).store(error('before the flood'))).status).toBe(200);
    let refused: Awaited<ReturnType<typeof call>> | undefined;
    const calmAnswers: number[] = [];
    // a flood of 100 every 50 ms, whatever the answers do, keeps what was taken waiting past 20 ms; beside it,
    // another project sends one event at a time
    const flood: Promise<unknown>[] = [];
    const calmSender = (async () => {
      while (refused === undefined) calmAnswers.push((await sentryOf(ctx, calm).store(error('calm'))).status);
    })();
    await until(async () => {
      for (let i = 0; i < 100; i++) {
        flood.push(
          s.store(error(`flood ${i}`)).then((a) => {
            if (a.status === 429 && a.body.reason === 'queue_delay') refused ??= a;
          }),
        );
      }
      await new Promise((r) => setTimeout(r, 50));
      return refused !== undefined;
    }, 30_000, 0);
    await Promise.all([...flood, calmSender]);
    expect(refused!.body).toMatchObject({ reason: 'queue_delay', retry_after: 1 });
    expect(refused!.headers.get('retry-after')).toBe('1');
    expect(refused!.headers.get('x-sentry-rate-limits')).toBe('1::organization:queue_delay');
    // the storm is shed from the project that sends it
    expect(calmAnswers.filter((status) => status !== 200)).toEqual([]);
    // the queue drains: taken again
    await until(async () => (await s.store(error('after the flood'))).status === 200, 10_000);
  }, 60_000);
});

/** Free space (MB) on the disk of the temporary folder; the disk test needs a little over 1 GB of it. */
const freeMb = () => Math.floor(((s) => s.bavail * s.bsize)(fs.statfsSync(os.tmpdir())) / 1048576);

describe.skipIf(freeMb() < 1024)('a disk under its floor refuses new events and sign-in attempts with 503', () => {
  let ctx: TestContext;
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-disk-floor-'));
    // the floor: 200 MB under what is free now (room for what other tests write meanwhile); a 500 MB file takes
    // the disk under it
    ctx = await startTestContext({ LOOKOUT_DATA_DIR: dir, DISK_FLOOR_MB: String(freeMb() - 200) });
  });
  afterAll(async () => {
    await ctx.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 with Retry-After while under it, and takes events again once space is freed', async () => {
    const p = await boundProject(ctx);
    let taken = 0;
    /** Sends an error event; true when it was refused for the disk. */
    const refused = async (value: string) => {
      const res = await p.send(error(value));
      if (res.status === 202) taken += 1;
      return res.status === 503;
    };
    expect(await refused('before the disk filled')).toBe(false);
    const filler = path.join(dir, 'filler');
    fs.writeFileSync(filler, Buffer.alloc(500 * 1048576));
    try {
      // the disk is sampled every 5 s
      await until(() => refused('while the disk is full'), 15_000, 200);
      const res = await p.send(attempt());
      expect(res.status).toBe(503);
      expect(res.body.reason).toBe('disk_floor');
      expect(res.headers.get('retry-after')).toBe('60');
      const sentry = await sentryOf(ctx, p).store(error('a Sentry SDK while the disk is full'));
      expect(sentry.status).toBe(503);
    } finally {
      fs.rmSync(filler);
    }
    await until(async () => !(await refused('after space was freed')), 15_000, 200);
    // what was acknowledged is stored; nothing refused is
    expect(await storedErrors(ctx, p)).toBe(taken);
  }, 60_000);
});
