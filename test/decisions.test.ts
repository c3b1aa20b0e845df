/**
 * Decisions (issue 24) through the real ingest path: sign-in attempts posted
 * to the API, applied by real workers on Redis and FerretDB, read from the
 * feed an installation polls, with its key and instance.
 */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { attemptGroupKey } from '../src/domain/client-keys.ts';
import type { EventEntry } from '../src/queues/jobs/events.job.ts';
import { processEventGroups } from '../workers/digest/events.ts';
import { boundProject, call, eventId, makeProject, type TestContext } from './helpers/context.ts';
import { withWorkers } from './helpers/with-workers.ts';
import { until } from './helpers/until.ts';

let ctx: TestContext;
withWorkers(['events'], (c) => (ctx = c), { FLUSH_INTERVAL_MS: '100' });

async function bound(alerts: Record<string, number> = {}) {
  const p = await boundProject(ctx);
  const project = p.id;
  if (Object.keys(alerts).length > 0) await ctx.runtime.admin.setAlerts(project, alerts);
  let seconds = 0;
  const fail = (actor: string, ip: string) =>
    p.send({ event_id: eventId(), timestamp: new Date(Date.now() - 60_000 + seconds++ * 100).toISOString(), security: { kind: 'login_failed', actor, ip } });
  const burst = async (actor: string, ip: string, n = 5) => {
    for (let i = 0; i < n; i++) expect((await fail(actor, ip)).status).toBe(202);
  };
  const feed = async (since?: string) => {
    const res = await p.get(`/sdk/decisions${since ? `?since=${since}` : ''}`);
    expect(res.status).toBe(200);
    return res.body as { decisions: { id: string; kind: string; actor?: string; ip: string; issue_id: string; created_at: string; until: string }[]; removed: string[]; cursor: string; full?: boolean };
  };
  return { ...p, project, burst, feed };
}

describe('GET /api/v1/sdk/decisions', () => {
  it('a burst makes one decision; the cursor then returns only what changed', async () => {
    const p = await bound();
    const empty = await p.feed();
    expect(empty).toEqual({ decisions: [], removed: [], cursor: '0-0' });
    await p.burst('alice@example.com', '203.0.113.7');
    await until(async () => (await p.feed()).decisions.length === 1);
    const first = await p.feed();
    const [d] = first.decisions;
    expect(d).toEqual({
      id: expect.stringMatching(/^d\d+$/),
      kind: 'brute_force',
      type: 'ban',
      escalation: 0,
      actor: 'alice@example.com',
      ip: '203.0.113.7',
      issue_id: expect.any(String),
      created_at: expect.any(String),
      until: expect.any(String),
    });
    expect(Date.parse(d!.until) - Date.parse(d!.created_at)).toBe(3600_000);
    expect(await p.feed(first.cursor)).toEqual({ decisions: [], removed: [], cursor: first.cursor });
    // The same burst growing extends the decision it made; another group makes another.
    await p.burst('alice@example.com', '203.0.113.7', 2);
    await p.burst('bob@example.com', '198.51.100.4');
    await until(async () => (await p.feed(first.cursor)).decisions.some((x) => x.actor === 'bob@example.com'));
    const changed = await p.feed(first.cursor);
    expect(changed.removed).toEqual([]);
    expect(changed.decisions.map((x) => x.actor).sort()).toEqual(['alice@example.com', 'bob@example.com']);
    expect(changed.decisions.find((x) => x.actor === 'alice@example.com')!.id).toBe(d!.id);
    expect((await p.feed()).decisions).toHaveLength(2);
  });

  it('resolving the issue ends its decision: its id is in removed', async () => {
    const p = await bound();
    await p.burst('carol@example.com', '203.0.113.8');
    await until(async () => (await p.feed()).decisions.length === 1);
    const before = await p.feed();
    const res = await call(ctx, 'POST', `/api/v1/issues/${before.decisions[0]!.issue_id}/status`, { key: p.secret, instance: p.instance, body: { status: 'resolved' } });
    expect(res.status).toBe(200);
    expect(await p.feed(before.cursor)).toMatchObject({ decisions: [], removed: [before.decisions[0]!.id] });
    expect((await p.feed()).decisions).toEqual([]);
  });

  it('lifting by hand ends it (removed), and the burst it came from makes no new one', async () => {
    const p = await bound();
    await p.burst('dave@example.com', '203.0.113.9');
    await until(async () => (await p.feed()).decisions.length === 1);
    const before = await p.feed();
    const id = before.decisions[0]!.id;
    expect(await ctx.runtime.decisions.lift(p.project, id, new Date())).toEqual({ lifted: id });
    await expect(ctx.runtime.decisions.lift(p.project, id, new Date())).rejects.toMatchObject({ reason: 'decision_not_found' });
    const after = await p.feed(before.cursor);
    expect(after).toMatchObject({ decisions: [], removed: [id] });
    // An attempt received after the lift is a new burst: a new decision.
    await p.burst('dave@example.com', '203.0.113.9', 1);
    await until(async () => (await p.feed(after.cursor)).decisions.length === 1);
    expect((await p.feed(after.cursor)).decisions[0]!.id).not.toBe(id);
  });

  it('a decision expires after decision_seconds: removed at the next poll, kept by its issue as expired', async () => {
    const p = await bound({ decision_seconds: 1 });
    await p.burst('erin@example.com', '203.0.113.10');
    await until(async () => (await p.feed()).decisions.length === 1);
    const before = await p.feed();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await p.feed(before.cursor)).toMatchObject({ decisions: [], removed: [before.decisions[0]!.id] });
    // its issue keeps it, ended when its time was up rather than when a poll noticed
    const issue = Number(before.decisions[0]!.issue_id);
    const [ended] = (await ctx.runtime.decisions.ofIssue(p.id, issue, new Date())).decisions;
    expect(ended).toMatchObject({ id: before.decisions[0]!.id, state: 'expired', ended_at: before.decisions[0]!.until });
  });

  it('decision_seconds 0 makes none; a credential-stuffing burst decides on the address alone', async () => {
    const off = await bound({ decision_seconds: 0 });
    await off.burst('frank@example.com', '203.0.113.11');
    const stuffing = await bound({ stuffing_threshold: 3 });
    for (const actor of ['u1', 'u2', 'u3']) await stuffing.burst(actor, '192.0.2.50', 1);
    await until(async () => (await stuffing.feed()).decisions.length === 1);
    expect((await stuffing.feed()).decisions[0]).toMatchObject({ kind: 'credential_stuffing', ip: '192.0.2.50' });
    expect((await stuffing.feed()).decisions[0]!.actor).toBeUndefined();
    await until(async () => (await ctx.runtime.stores.events.backlog.size()) === 0);
    expect((await off.feed()).decisions).toEqual([]);
  });

  it('two workers on one burst make one decision', async () => {
    const p = await makeProject(ctx);
    const project = Number(p.project.id);
    const events: EventEntry[] = Array.from({ length: 5 }, (_, i) => {
      const event_id = crypto.randomBytes(16).toString('hex');
      return {
        _id: `${project}:${event_id}`, project_id: project, event_id, batch: '', kind: 'security' as const, security_kind: 'login_failed',
        actor: 'gina', ip: '203.0.113.12', group_key: attemptGroupKey('gina', '203.0.113.12'), fingerprint: null, release: null, at: new Date(Date.now() - 10_000 + i),
        received_at: new Date(), level: 'error', title: '', culprit: '', exception_type: null, company: null,
      };
    });
    const job = { groups: [{ id: `g-two-${project}`, received_at: new Date().toISOString(), events }] };
    await ctx.runtime.keeper.verify(project, new Date()); // a new project's state is set up once, as the first job would
    await Promise.all([processEventGroups(job, ctx.runtime, new Date()), processEventGroups(job, ctx.runtime, new Date())]);
    await processEventGroups(job, ctx.runtime, new Date());
    const { decisions } = await ctx.runtime.decisions.feed(project, undefined, new Date());
    expect(decisions).toHaveLength(1);
    const log = await ctx.runtime.issuesState.redis.xrange(`${ctx.config.queuePrefix}:{p:${project}}:dlog`, '-', '+');
    expect(log).toHaveLength(1);
  });

  it('keys, instance and cursor are checked', async () => {
    const p = await bound();
    const get = (opts: { key?: string; instance?: string }, query = '') => call(ctx, 'GET', `/api/v1/sdk/decisions${query}`, opts);
    expect((await get({ key: p.publicKey, instance: p.instance })).status).toBe(403);
    expect((await get({ key: p.secret, instance: 'inst-someone-else' })).status).toBe(403);
    expect((await get({ key: p.secret })).status).toBe(403);
    expect((await get({ instance: p.instance })).status).toBe(401);
    const bad = await get({ key: p.secret, instance: p.instance }, '?since=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.reason).toBe('invalid_cursor');
    // A cursor the log never gave (ahead of it) answers the full list.
    expect(await p.feed('99999999999999-0')).toEqual({ decisions: [], removed: [], cursor: '0-0', full: true });
  });
});
