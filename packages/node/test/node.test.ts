/**
 * @lookout/node as an installation uses it: the built package imported by
 * its name, against a real Lookout (API, workers, Redis, FerretDB).
 */
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient, InstanceBoundElsewhereError, ProjectHasInstanceError, SeatsExceededError, type LookoutClient } from '@lookout/node';
import { startApi } from '../../../src/http/server.ts';
import { startWorkers } from '../../../workers/main.ts';
import { call, drained, makeProject, startTestContext, storedEvents, type TestContext } from '../../../test/helpers/context.ts';
import { runCli } from '../../../test/helpers/process.ts';

let ctx: TestContext;
let workers: Awaited<ReturnType<typeof startWorkers>>;
const clients: LookoutClient[] = [];
beforeAll(async () => {
  ctx = await startTestContext();
  workers = await startWorkers(ctx.runtime, { queues: ['sessions', 'events'] });
});
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await workers?.close();
  await ctx?.close();
});

let instances = 0;
async function activated(opts: Parameters<typeof makeProject>[1] = {}, clientOpts: Partial<Parameters<typeof createClient>[0]> = {}) {
  const p = await makeProject(ctx, opts);
  const instanceId = `node-sdk-${++instances}-${Date.now()}`;
  const lookout = createClient({ baseUrl: ctx.api, secretKey: p.secret, instanceId, release: 'shop@2.0.0', environment: 'production', ...clientOpts });
  clients.push(lookout);
  await lookout.activate({ platform: 'odoo', platformVersion: '17.0' });
  return { ...p, lookout, instanceId };
}

const issuesOf = async (p: { secret: string; instanceId: string }, status = 'unresolved') =>
  (await call(ctx, 'GET', `/api/v1/issues?status=${status}`, { key: p.secret, instance: p.instanceId })).body.issues as {
    kind: string;
    exception_type: string | null;
    event_count: number;
    title: string;
  }[];

describe('@lookout/node', () => {
  it('activates, and names both 409s with their own errors', async () => {
    const p = await activated();
    const other = createClient({ baseUrl: ctx.api, secretKey: p.secret, instanceId: 'another-installation' });
    clients.push(other);
    await expect(other.activate()).rejects.toBeInstanceOf(ProjectHasInstanceError);
    const q = await makeProject(ctx);
    const sameInstance = createClient({ baseUrl: ctx.api, secretKey: q.secret, instanceId: p.instanceId });
    clients.push(sameInstance);
    await expect(sameInstance.activate()).rejects.toMatchObject({ name: 'InstanceBoundElsewhereError', status: 409, reason: 'instance_bound_elsewhere' });
    await expect(sameInstance.activate()).rejects.toBeInstanceOf(InstanceBoundElsewhereError);
  });

  it('sees a plan change made with the admin CLI on its next poll', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const p = await activated({ plan: 'business', seats: 25 });
    const changed = new Promise((resolve) => p.lookout.on('config', resolve));
    const set = await runCli(['admin', 'org', 'set', '--org', p.org.id, '--plan', 'enterprise', '--seats', '100'], ctx.env);
    expect(set.code, set.stderr).toBe(0);
    await vi.advanceTimersByTimeAsync(11 * 60_000); // past the 10-minute poll and its jitter
    expect(await changed).toMatchObject({ features: { plan: 'enterprise', seats: 100 } });
  });

  it('sets contacts up to the seats, and past them gets SeatsExceededError with seats, used and plan', async () => {
    const p = await activated({ plan: 'team', seats: 2 });
    const person = (id: string) => ({ id, name: `Person ${id}`, email: `${id}@acme.example` });
    expect(await p.lookout.setContacts([{ id: 'c1', name: 'Acme', people: [person('a'), person('b')] }])).toEqual({ used: 2, seats: 2, plan: 'team' });
    const refused = p.lookout.setContacts([{ id: 'c1', name: 'Acme', people: [person('a'), person('b'), person('c')] }]);
    await expect(refused).rejects.toBeInstanceOf(SeatsExceededError);
    await expect(refused).rejects.toMatchObject({ seats: 2, used: 3, plan: 'team' });
  });

  it('a burst of failed sign-ins raises exactly one security issue, and no password reaches the stores', async () => {
    const p = await activated();
    for (let i = 0; i < 12; i++) {
      p.lookout.signInAttempt({ kind: 'login_failed', actor: 'ada@acme.example', ip: '203.0.113.9', outcome: 'wrong password', password: 'hunter2-do-not-store' } as never);
    }
    await p.lookout.flush();
    expect(p.lookout.stats()).toMatchObject({ events: 12, sent: 12, dropped: 0, failed: 0 });
    await drained(ctx);
    expect((await issuesOf(p)).filter((i) => i.kind === 'security')).toHaveLength(1);
    const stored = JSON.stringify(await storedEvents(ctx, Number(p.project.id)));
    expect(stored).toContain('ada@acme.example');
    expect(stored).not.toContain('hunter2');
  });

  it('isBlocked() turns true after a burst and false after the lift, without the caller polling', async () => {
    const p = await activated({}, { decisionsPollSeconds: 1 });
    const changes: unknown[] = [];
    p.lookout.on('decisions', (list) => changes.push(list));
    const who = { actor: 'mallory@acme.example', ip: '198.51.100.66' };
    expect(p.lookout.isBlocked(who)).toBe(false);
    for (let i = 0; i < 5; i++) p.lookout.signInAttempt({ kind: 'login_failed', ...who });
    await p.lookout.flush();
    await vi.waitFor(() => expect(p.lookout.isBlocked(who)).toBe(true), { timeout: 20_000, interval: 100 });
    expect(p.lookout.isBlocked({ actor: 'someone.else@acme.example', ip: who.ip })).toBe(false);
    expect(p.lookout.isBlocked({ actor: who.actor, ip: '198.51.100.67' })).toBe(false);
    const [decision] = p.lookout.decisions();
    expect(decision).toMatchObject({ kind: 'brute_force', actor: who.actor, ip: who.ip });
    await ctx.runtime.decisions.lift(Number(p.project.id), decision!.id, new Date());
    await vi.waitFor(() => expect(p.lookout.isBlocked(who)).toBe(false), { timeout: 20_000, interval: 100 });
    expect(changes).toHaveLength(2);
  });

  it('captureException creates an issue with the exception and its stack', async () => {
    const p = await activated();
    function checkout(): never {
      throw new TypeError("Cannot read properties of undefined (reading 'total')");
    }
    try {
      checkout();
    } catch (err) {
      p.lookout.captureException(err, { tags: { company: 'acme-gmbh', api_token: 'secret-value' } });
    }
    await p.lookout.flush();
    await drained(ctx);
    const [issue] = await issuesOf(p);
    expect(issue).toMatchObject({ kind: 'error', exception_type: 'TypeError', event_count: 1, companies: ['acme-gmbh'] });
    const stored = JSON.stringify(await storedEvents(ctx, Number(p.project.id)));
    expect(stored).toContain('checkout');
    expect(stored).not.toContain('secret-value');
  });

  it('sessions with error() and crash() land in the right buckets', async () => {
    const p = await activated();
    const ok = p.lookout.startSession({ did: 'user-1' });
    const errored = p.lookout.startSession({ did: 'user-2' });
    const crashed = p.lookout.startSession({ did: 'user-3' });
    errored.error();
    crashed.error();
    crashed.crash();
    crashed.error(); // a crash stays a crash
    for (const s of [ok, errored, crashed]) s.end();
    await p.lookout.flush();
    await drained(ctx);
    const releases = (await call(ctx, 'GET', '/api/v1/releases', { key: p.secret, instance: p.instanceId })).body.releases;
    expect(releases).toEqual([expect.objectContaining({ release: 'shop@2.0.0', sessions: { total: 3, ok: 1, errored: 1, abnormal: 0, crashed: 1 } })]);
  });

  it('server mode sends per-minute aggregates', async () => {
    const p = await activated({}, { sessionMode: 'aggregate' });
    for (let i = 0; i < 5; i++) p.lookout.startSession().end();
    const bad = p.lookout.startSession();
    bad.crash();
    bad.end();
    await p.lookout.flush();
    await drained(ctx);
    const releases = (await call(ctx, 'GET', '/api/v1/releases', { key: p.secret, instance: p.instanceId })).body.releases;
    expect(releases[0].sessions).toEqual({ total: 6, ok: 5, errored: 0, abnormal: 0, crashed: 1 });
  });

  it('loses nothing when the API restarts while it sends: failed sends are retried', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = s.address() as net.AddressInfo;
        s.close(() => resolve(free));
      });
    });
    let api = await startApi(ctx.runtime, { host: '127.0.0.1', port });
    const p = await makeProject(ctx);
    const lookout = createClient({ baseUrl: api.url, secretKey: p.secret, instanceId: 'restart-installation', release: 'shop@2.0.0' });
    clients.push(lookout);
    await lookout.activate();
    await api.close();
    const ids = Array.from({ length: 20 }, (_, i) => lookout.signInAttempt({ kind: 'login_succeeded', actor: `user-${i}@acme.example` }));
    await new Promise((r) => setTimeout(r, 1500)); // the API is down: sends fail and wait to retry
    api = await startApi(ctx.runtime, { host: '127.0.0.1', port });
    try {
      await lookout.flush();
      expect(lookout.stats()).toMatchObject({ sent: 20, failed: 0, dropped: 0 });
      expect(lookout.stats().retries).toBeGreaterThan(0);
      const stored = await storedEvents(ctx, Number(p.project.id));
      expect(stored.map((e) => e.event_id).sort()).toEqual([...ids].sort());
    } finally {
      await api.close();
    }
  });
});

describe('@lookout/node against a rate limit', () => {
  let limited: TestContext;
  beforeAll(async () => {
    limited = await startTestContext({ SESSIONS_RATE_LIMIT_PER_MINUTE: '2' });
  });
  afterAll(async () => {
    await limited?.close();
  });

  it('honours a 429: waits for Retry-After, then the sessions are taken', async () => {
    const p = await makeProject(limited);
    const lookout = createClient({ baseUrl: limited.api, secretKey: p.secret, instanceId: 'rate-limited-one', publicKey: p.publicKey, release: 'shop@2.0.0' });
    clients.push(lookout);
    for (let i = 0; i < 3; i++) {
      lookout.startSession().end();
      await lookout.flush();
    }
    // the third request was refused with 429 and sent again once the minute was over
    expect(lookout.stats()).toMatchObject({ sent: 3, failed: 0, retries: 1 });
  }, 120_000);
});
