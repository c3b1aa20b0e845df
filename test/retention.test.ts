/**
 * Event retention (issue 25) against real Redis, BullMQ and FerretDB with a
 * real events worker: expired error events and sign-in attempts are deleted,
 * per project, and issues keep their counters, through a recount too. The
 * clock is the test's: the job is called with a later `now`.
 */
import { describe, expect, it } from 'vitest';
import { attemptGroupKey } from '../src/domain/client-keys.ts';
import type { EventDoc } from '../src/store/events.store.ts';
import { runRetention } from '../workers/digest/maintenance.ts';
import { call, drained, eventId, makeProject, type TestContext } from './helpers/context.ts';
import { withWorkers } from './helpers/with-workers.ts';
import { until } from './helpers/until.ts';

let ctx: TestContext;
withWorkers(['events'], (c) => (ctx = c));

const DAY = 24 * 3600_000;
const fast = { chunk: 500, pauseMs: 0 };

async function bound(retentionDays?: number) {
  const p = await makeProject(ctx);
  const id = Number(p.project.id);
  if (retentionDays !== undefined) await ctx.runtime.admin.setProject(id, { event_retention_days: retentionDays });
  const send = (body: Record<string, unknown>) => call(ctx, 'POST', '/api/v1/events', { key: p.secret, body });
  const get = (path: string) => call(ctx, 'GET', `/api/v1${path}`, { key: p.secret });
  // error events and sign-in attempts' keys alike: their _id starts with the project's
  const stored = async () => ctx.runtime.stores.events.collection.countDocuments({ _id: { $regex: `^${id}:` } });
  return { ...p, id, send, get, stored };
}

const error = (type: string, extra: Record<string, unknown> = {}) => ({
  event_id: eventId(),
  timestamp: new Date().toISOString(),
  level: 'error',
  release: '1.0.0',
  environment: 'production',
  tags: { company: 'acme' },
  exception: { values: [{ type, value: 'expired later' }] },
  ...extra,
});
const attempt = () => ({ event_id: eventId(), timestamp: new Date().toISOString(), security: { kind: 'login_failed', actor: 'alice', ip: '203.0.113.9' } });

/** Three error events of one issue and two sign-in attempts, applied and flushed; the issue as the API shows it. */
async function withEvents(p: Awaited<ReturnType<typeof bound>>) {
  for (const body of [error('RetainedError'), error('RetainedError'), error('RetainedError'), attempt(), attempt()]) expect((await p.send(body)).status).toBe(202);
  await drained(ctx);
  const [issue] = (await p.get('/issues')).body.issues;
  return (await p.get(`/issues/${issue.id}`)).body;
}

describe('event retention', () => {
  it("deletes each project's events past its retention; issues keep their counts, spread and first sighting, through a recount", async () => {
    const kept = await bound(); // EVENT_RETENTION_DAYS: 90
    const short = await bound(10);
    const keptIssue = await withEvents(kept);
    const before = await withEvents(short);
    expect(before).toMatchObject({ event_count: 3, latest_event_expired: false });

    const deleted = await runRetention(ctx.runtime, new Date(Date.now() + 11 * DAY), fast);
    expect(deleted).toMatchObject({ error_events: 3, sign_in_attempts: 2 });
    expect(await short.stored()).toBe(0);
    expect(await kept.stored()).toBe(5);

    const after = (await short.get(`/issues/${before.id}`)).body;
    expect(after).toMatchObject({ event_count: 3, first_seen: before.first_seen, last_seen: before.last_seen, latest_event: null, latest_event_expired: true });
    expect(after.spread).toEqual(before.spread);
    expect((await short.get(`/issues/${before.id}/events`)).body).toMatchObject({ events: [], total: 0 });
    expect((await kept.get(`/issues/${keptIssue.id}/events`)).body.total).toBe(3);

    // A Redis that lost the project's state recounts from the stored events plus what retention deleted.
    await ctx.runtime.keeper.rebuild(short.id, new Date());
    await until(async () => (await ctx.runtime.issuesState.snapshot(short.id)).issues.length === 0);
    const recounted = (await short.get(`/issues/${before.id}`)).body;
    expect(recounted).toMatchObject({ event_count: 3, first_seen: before.first_seen, latest_event_expired: true });
    expect(recounted.spread).toEqual(before.spread);
    expect((await short.get('/issues?release=1.0.0')).body.total).toBe(1);

    // Ninety days on, the default's turn; a second run finds nothing more.
    expect(await runRetention(ctx.runtime, new Date(Date.now() + 91 * DAY), fast)).toMatchObject({ error_events: 3, sign_in_attempts: 2 });
    expect(await kept.stored()).toBe(0);
    expect((await kept.get(`/issues/${keptIssue.id}`)).body.event_count).toBe(3);
    expect(await runRetention(ctx.runtime, new Date(Date.now() + 91 * DAY), fast)).toMatchObject({ error_events: 0, sign_in_attempts: 0 });
  });

  it("an event's attachments go with it, and user feedback past the retention with them", async () => {
    const p = await bound(10);
    const event = eventId();
    const lines = [{ event_id: event }, { type: 'event' }, { event_id: event, message: 'with a file' }, { type: 'attachment', filename: 'a.txt', length: 5 }, 'hello', { type: 'user_report' }, { event_id: event, comments: 'it broke' }];
    const body = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n');
    const res = await fetch(`${ctx.api}/api/${p.id}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', body });
    expect((await res.json()).dropped).toEqual([]);
    await drained(ctx);
    const [issue] = (await p.get('/issues')).body.issues;
    expect(issue.user_feedback).toBe(1);
    expect(await ctx.runtime.stores.attachments.ofEvent(p.id, event)).toHaveLength(1);

    await runRetention(ctx.runtime, new Date(Date.now() + 11 * DAY), fast);
    expect(await ctx.runtime.stores.attachments.ofEvent(p.id, event)).toEqual([]);
    expect((await p.get(`/issues/${issue.id}/feedback`)).body).toMatchObject({ feedback: [], total: 0 });
    expect((await p.get('/issues')).body.issues[0].user_feedback).toBe(0);
  });

  it('finishes a chunk a run journalled and did not finish, adding its tallies once', async () => {
    const p = await bound();
    const issue = await withEvents(p);
    const errors = await ctx.runtime.stores.events.collection.find({ project_id: p.id, kind: 'error' }).toArray();
    const change = { issue: Number(issue.id), project_id: p.id, events: errors.map((e) => e.event_id), spread: [{ key: 'r:1.0.0', n: 3 }] };
    // A run died after journalling the chunk and adding its tally, before deleting the journal entry.
    await ctx.runtime.stores.expired.begin({ _id: 'died-halfway', ids: errors.map((e) => e._id), tallies: [change] });
    await ctx.runtime.stores.expired.add('died-halfway', change);

    await runRetention(ctx.runtime, new Date(), fast); // nothing else is due
    expect(await ctx.runtime.stores.expired.unfinished()).toEqual([]);
    expect(await p.stored()).toBe(2); // the two sign-in attempts
    const tallies = await ctx.runtime.stores.expired.ofProject(p.id);
    expect(tallies.get(Number(issue.id))?.count).toBe(3);
    expect((await p.get(`/issues/${issue.id}/events`)).body.total).toBe(0);
  });

  it('deletes 100,000 expired events while events are posted: every post answered 202 and counted', async () => {
    const p = await bound();
    const old = new Date(Date.now() - 100 * DAY);
    const payload = JSON.stringify({ message: 'x'.repeat(300) });
    for (let i = 0; i < 100_000; i += 5000) {
      const docs: EventDoc[] = Array.from({ length: 5000 }, (_, k) => {
        const event = eventId();
        const security = (i + k) % 4 !== 0;
        return {
          _id: `${p.id}:${event}`,
          project_id: p.id,
          event_id: event,
          batch: 'old',
          kind: security ? 'security' : 'error',
          security_kind: security ? 'login_failed' : null,
          actor: security ? `user-${k % 50}` : null,
          ip: security ? '198.51.100.1' : null,
          group_key: security ? attemptGroupKey(`user-${k % 50}`, '198.51.100.1') : null,
          // never counted: an issue's fingerprint has no issue of this project
          fingerprint: security ? null : 'fingerprint-of-no-issue',
          release: null,
          at: old,
          received_at: old,
          payload,
        };
      });
      await ctx.runtime.stores.events.collection.insertMany(docs);
    }

    const statuses: number[] = [];
    let posting = true;
    const poster = (async () => {
      while (posting) {
        statuses.push((await p.send(error('PostedDuringRetention'))).status);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const deleted = await runRetention(ctx.runtime, new Date(), { chunk: 500, pauseMs: 20 });
    posting = false;
    await poster;
    await drained(ctx);

    expect(deleted).toMatchObject({ error_events: 25_000, sign_in_attempts: 75_000 });
    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((s) => s !== 202)).toEqual([]);
    expect(await ctx.runtime.stores.events.collection.countDocuments({ project_id: p.id, received_at: { $lt: new Date(Date.now() - DAY) } })).toBe(0);
    expect(await p.stored()).toBe(statuses.length);
    const [issue] = (await p.get('/issues')).body.issues;
    expect(issue.event_count).toBe(statuses.length);
  }, 240_000);
});
