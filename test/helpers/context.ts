/**
 * Per-test-file context: a fresh database and queue prefix on the shared
 * test servers, a runtime, and an API listening on a free loopback port.
 * MONGODB_URL in the environment points the suite at a real MongoDB instead.
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import type { Writable } from 'node:stream';
import { Binary } from 'mongodb';
import { inject } from 'vitest';
import { checkAnswer } from './answers.ts';
import { loadConfig, type Config } from '../../config/index.ts';
import { storeUrls } from '../../src/embedded/stores.ts';
import { startApi } from '../../src/http/server.ts';
import { emptyState, replayPart } from '../../src/domain/release-health.ts';
import type { SessionStatus } from '../../src/domain/sessions.ts';
import { partsOf } from '../../src/state/rebuild.ts';
import { payloadOf, type EventDoc } from '../../src/store/events.store.ts';
import { makeLogger } from '../../src/log.ts';
import { makeRuntime, type Runtime } from '../../src/runtime.ts';

export interface TestContext {
  config: Config;
  runtime: Runtime;
  api: string;
  urls: { redisUrl: string; mongoUrl: string };
  env: Record<string, string>;
  close(): Promise<void>;
}

export function testEnv(extra: Record<string, string> = {}): Record<string, string> {
  const suffix = crypto.randomBytes(4).toString('hex');
  return {
    REDIS_URL: inject('redisUrl'),
    MONGODB_URL: process.env.LOOKOUT_TEST_MONGODB_URL || inject('mongoUrl'),
    MONGODB_DB: `lookout_test_${suffix}`,
    QUEUE_PREFIX: `lookout_test_${suffix}`,
    LOG_LEVEL: process.env.LOOKOUT_TEST_LOG_LEVEL ?? 'silent',
    KEY_CACHE_SECONDS: '0',
    // A test's requests are not refused for the host being busy (two cores shared by every test file): the
    // admission tests set their own limits (test/admission.test.ts).
    ADMIT_BUFFER_ITEMS: '10000000',
    ADMIT_MAX_STALL_MS: '3600000',
    ADMIT_TARGET_DELAY_MS: '600000',
    ADMIT_MAX_QUEUE_DEPTH: '100000000',
    DISK_FLOOR_MB: '0',
    ...extra,
  };
}

/** `logTo` receives the log lines (at LOG_LEVEL) instead of stdout. */
export async function startTestContext(extra: Record<string, string> = {}, opts: { logTo?: Writable } = {}): Promise<TestContext> {
  const env = testEnv(extra);
  const config = loadConfig(env);
  const urls = storeUrls(config);
  const runtime = await makeRuntime(config, urls, makeLogger(config.logLevel, 'test', opts.logTo));
  const api = await startApi(runtime, { host: '127.0.0.1', port: 0 });
  return {
    config,
    runtime,
    api: api.url,
    urls,
    env,
    async close() {
      await api.close();
      await runtime.mongo.db.dropDatabase().catch(() => {});
      await runtime.close();
    },
  };
}

/** A project ready for SDK calls: its org, ids and keys. */
export async function makeProject(
  ctx: TestContext,
  opts: { plan?: string; seats?: number | null; securityMonitoring?: boolean } = {},
) {
  const org = await ctx.runtime.admin.createOrg({ name: 'Acme', plan: opts.plan ?? 'business', seats: opts.seats ?? null });
  const project = await ctx.runtime.admin.createProject({
    org: Number(org.id),
    name: 'shop',
    securityMonitoring: opts.securityMonitoring ?? true,
  });
  return { org, project, secret: project.secret_key, publicKey: project.public_key };
}

/**
 * A project with an installation bound to it (`POST /api/v1/sdk/activate`), and calls made as that installation:
 * `v1` any call under /api/v1, `get` and `post` its reads and writes, `send` an event.
 */
export async function boundProject(ctx: TestContext, opts: Parameters<typeof makeProject>[1] = {}) {
  const p = await makeProject(ctx, opts);
  const instance = `inst-${p.project.id}-0000`;
  await call(ctx, 'POST', '/api/v1/sdk/activate', { key: p.secret, body: { instance_id: instance } });
  const v1 = (method: string, path: string, body?: unknown) => call(ctx, method, `/api/v1${path}`, { key: p.secret, instance, body });
  return {
    ...p,
    id: Number(p.project.id),
    instance,
    v1,
    get: (path: string) => v1('GET', path),
    post: (path: string, body: unknown) => v1('POST', path, body),
    send: (body: Record<string, unknown>) => v1('POST', '/events', body),
  };
}

export interface CallOptions {
  key?: string;
  instance?: string;
  body?: unknown;
  raw?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

/** One HTTP call to the API; the body is parsed as JSON when it is JSON. */
export async function call(ctx: TestContext, method: string, path: string, opts: CallOptions = {}) {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key !== undefined) headers['x-service-key'] = opts.key;
  if (opts.instance !== undefined) headers['x-service-instance'] = opts.instance;
  let body: string | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
  const res = await fetch(`${ctx.api}${path}`, { method, headers, body });
  const text = await res.text();
  let json: any = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  // The README's promise, held for every answer the suite sees: each non-2xx is JSON {reason, message, ...}.
  if (res.status >= 400 && !(typeof json?.reason === 'string' && typeof json?.message === 'string')) {
    throw new Error(`${method} ${path} answered ${res.status} without {reason, message}: ${text.slice(0, 200)}`);
  }
  await checkAnswer(ctx.api, method, path, res.status, json);
  return { status: res.status, body: json, text, headers: res.headers };
}

/** The dashboard session cookie (`lookout_session=…`) a sign-in's answer sets; '' when it sets none. */
export const sessionCookie = (res: { headers: Headers }) => /lookout_session=[^;]+/.exec(res.headers.get('set-cookie') ?? '')?.[0] ?? '';

/** The headers of dashboard calls after a sign-in: its session cookie and its CSRF token. */
export const dashboardHeaders = (res: { headers: Headers; body?: { csrf_token?: string } }) => ({ cookie: sessionCookie(res), 'x-csrf-token': res.body?.csrf_token ?? '' });

/** Waits until every stored event group and session batch is applied and flushed to MongoDB. */
export async function drained(ctx: TestContext, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const pending = async () =>
    (await ctx.runtime.stores.events.backlog.size()) +
    (await ctx.runtime.stores.sessions.backlog.size()) +
    (await ctx.runtime.stores.checkins.backlog.size()) +
    (await ctx.runtime.stores.traces.backlog.size());
  while (Date.now() < deadline) {
    if ((await pending()) === 0) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  const counts = { events: await ctx.runtime.queues.queue('events').getJobCounts(), sessions: await ctx.runtime.queues.queue('sessions').getJobCounts() };
  throw new Error(`work still unprocessed after ${timeoutMs} ms: ${JSON.stringify({ pending: await pending(), counts })}`);
}

/**
 * The project's rollups as flushed to MongoDB, and a recount of its raw
 * batches through the pure replay (the oracle), keyed by rollup id, for an
 * exact comparison.
 */
export async function rollupsAndRecount(ctx: TestContext, project: number) {
  const { hours, releases } = ctx.runtime.stores.sessions;
  const replayed = emptyState();
  for await (const { batch } of ctx.runtime.stores.sessions.batchesOf(project)) {
    replayPart(project, replayed, batch._id, partsOf(batch).get(project)!, batch.received_at, ctx.config.sessionUpdateWindowMs);
  }
  const pick = (docs: Iterable<{ _id: string; sessions: unknown; users: unknown }>) => Object.fromEntries([...docs].map((d) => [d._id, { sessions: d.sessions, users: d.users }]));
  const stored = {
    hours: pick(await hours.find({ project_id: project }).toArray()),
    releases: pick(await releases.find({ project_id: project }).toArray()),
  };
  return { stored, recounted: { hours: pick(replayed.hours.values()), releases: pick(replayed.releases.values()) } };
}

/** The worst status Redis holds for each of the sessions (absent ones are left out). */
export async function sessionStatuses(ctx: TestContext, project: number, sids: Iterable<string>): Promise<Map<string, SessionStatus>> {
  const out = new Map<string, SessionStatus>();
  for (const sid of sids) {
    const stored = await ctx.runtime.sessionState.session(project, sid);
    if (stored) out.set(sid, stored.status);
  }
  return out;
}

/**
 * Everything the stores hold, as one text to search for what must never be
 * stored: every document of every collection, compressed event payloads and
 * raw session batches inflated (their bytes would hide a secret from a plain
 * search).
 */
export async function everythingStored(ctx: TestContext): Promise<string> {
  const db = ctx.runtime.mongo.db;
  let text = '';
  for (const { name } of await db.listCollections().toArray()) {
    const docs = await db.collection(name).find({}).toArray();
    const readable = (doc: Record<string, unknown>) => {
      if (doc.payload instanceof Binary) return { ...doc, payload: payloadOf(doc as unknown as EventDoc) };
      if (doc.packed instanceof Binary) return { ...doc, packed: zlib.inflateRawSync(doc.packed.buffer).toString('utf8') }; // raw session batches
      if (doc.data instanceof Binary) return { ...doc, data: zlib.inflateRawSync(doc.data.buffer).toString('utf8') }; // traces and log lines
      return doc;
    };
    text += JSON.stringify(docs.map(readable));
  }
  return text;
}

/** A project's stored events as they were stored: error events' documents' payloads and the packed sign-in attempts. */
export async function storedEvents(ctx: TestContext, project: number): Promise<Record<string, unknown>[]> {
  const events = ctx.runtime.stores.events;
  const bodies = (await events.collection.find({ project_id: project }).toArray()).map((doc) => payloadOf(doc));
  for await (const chunk of events.attempts.ofProject(project)) bodies.push(...chunk.map((a) => a.body));
  return bodies;
}

/** A fresh 32-hex event id. */
export function eventId(): string {
  return crypto.randomBytes(16).toString('hex');
}
