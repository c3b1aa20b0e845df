/**
 * Repacking sign-in attempts (issue 25) on the real FerretDB and Redis: a
 * minute's groups become parts of some 5,000 attempts and their documents go,
 * and every attempt reads back as before, once, by project and by key. A run
 * killed after its further parts (so another run splits the minute its own
 * way) and a group applied after its minute was committed lose nothing: what
 * no committed part holds keeps its document. Through the API and a worker,
 * the scheduled job leaves a security issue's latest event readable.
 */
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { Binary } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { REPACK_AFTER_MS, repackAttempts } from '../src/services/repack.service.ts';
import { REPACK_BUCKET_MS, type AttemptBody, type AttemptsDoc } from '../src/store/attempts.store.ts';
import { eventKey } from '../src/store/events.store.ts';
import { call, drained, eventId, makeProject, type TestContext } from './helpers/context.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['events'], (c) => (ctx = c));

const attempt = (id: string, actor: string): AttemptBody => ({
  event_id: id,
  timestamp: new Date().toISOString(),
  security: { kind: 'login_failed', actor, ip: '203.0.113.7' },
  extra_field: { kept: actor },
});

/** A group id made `offsetMs` into a minute, as the API makes them (src/util/group-commit.ts). */
const groupIn = (bucket: number, offsetMs: number) => `${(bucket * REPACK_BUCKET_MS + offsetMs).toString(36)}${crypto.randomBytes(8).toString('hex')}`;

/** `size` fresh attempts of group `i`. */
const fresh = (i: number, size: number) => Array.from({ length: size }, (_, n) => attempt(eventId(), `user-${i}-${n % 7}`));

/** Stores groups as the API does: each group's document, then its attempts' keys (a duplicate's key stays the earlier group's). */
async function storeGroups(project: number, bucket: number, groupsBodies: AttemptBody[][]) {
  const { attempts, collection } = ctx.runtime.stores.events;
  const groups: { id: string; bodies: AttemptBody[] }[] = [];
  for (const [i, bodies] of groupsBodies.entries()) {
    const id = groupIn(bucket, 1000 * (i + 1));
    await attempts.insert(id, new Date(), new Map([[project, bodies]]));
    const keys = bodies.map((b) => ({ _id: eventKey(project, b.event_id), b: id }));
    await collection.insertMany(keys as never[], { ordered: false }).catch(() => {});
    groups.push({ id, bodies });
  }
  return groups;
}

/** What the project's attempts read back as: event id, owning group and body, sorted. */
async function readBack(project: number) {
  const all = [];
  for await (const chunk of ctx.runtime.stores.events.attempts.ofProject(project)) all.push(...chunk.map((a) => [a.event_id, a.batch, JSON.stringify(a.body)].join(' ')));
  return all.sort();
}

const groupDocs = (project: number, groups: { id: string }[]) =>
  ctx.runtime.stores.events.attempts.collection
    .find({ _id: { $in: groups.map((g) => `${g.id}:${project}`) } }, { projection: { _id: 1 } })
    .toArray()
    .then((docs) => docs.map((d) => d._id).sort());

describe('repacking sign-in attempts', () => {
  it("rewrites a minute's groups as parts and deletes their documents; every attempt reads back as before, once", async () => {
    const project = 990_201;
    const bucket = Math.floor(Date.UTC(2026, 10, 1, 12, 0) / REPACK_BUCKET_MS);
    // 13 groups of 450: the first part closes at 5,400 attempts (12 groups), the 13th group makes part 1.
    const groups = await storeGroups(project, bucket, Array.from({ length: 13 }, (_, i) => fresh(i, 450)));
    const nextMinute = await storeGroups(project, bucket + 1, [fresh(0, 3)]); // untouched
    const before = await readBack(project);
    expect(before).toHaveLength(13 * 450 + 3);
    const samples = [groups[0]!.bodies[0]!, groups[11]!.bodies[449]!, groups[12]!.bodies[7]!].map((b) => eventKey(project, b.event_id));
    const bodies = await Promise.all(samples.map((key) => ctx.runtime.stores.events.body(key)));

    const { attempts } = ctx.runtime.stores.events;
    expect(await attempts.repack(project, bucket, groups.map((g) => g.id).reverse())).toBe(13);
    const parts = await attempts.collection.find<AttemptsDoc>({ _id: { $regex: `^r:${project}:${bucket}:` } }).toArray();
    expect(parts.map((p) => [p._id, p.count]).sort()).toEqual([
      [`r:${project}:${bucket}:0`, 5400],
      [`r:${project}:${bucket}:1`, 450],
    ]);
    expect(parts.find((p) => p._id.endsWith(':0'))!.parts).toEqual([groups[12]!.id]);
    expect(await groupDocs(project, groups)).toEqual([]);
    expect(await groupDocs(project, nextMinute)).toHaveLength(1);
    expect(await readBack(project)).toEqual(before);
    expect(await Promise.all(samples.map((key) => ctx.runtime.stores.events.body(key)))).toEqual(bodies);

    // Run again (a crash after the deletes, before Redis forgot the groups): nothing changes.
    expect(await attempts.repack(project, bucket, groups.map((g) => g.id))).toBe(0);
    expect(await readBack(project)).toEqual(before);

    // Retention deletes a part with the keys its groups own.
    expect(await attempts.delete(`r:${project}:${bucket}:1`)).toBe(450);
    expect(await attempts.delete(`r:${project}:${bucket}:0`)).toBe(5400);
    expect(await readBack(project)).toHaveLength(3);
  });

  /** A part as a run writes it, from whole groups. */
  const partDoc = (project: number, bucket: number, index: number, groups: { id: string; bodies: AttemptBody[] }[]): AttemptsDoc => ({
    _id: `r:${project}:${bucket}:${index}`,
    project_id: project,
    batch: `r:${project}:${bucket}:${index}`,
    received_at: new Date(),
    at_max: new Date(),
    count: groups.reduce((n, g) => n + g.bodies.length, 0),
    packed: new Binary(zlib.deflateRawSync(JSON.stringify({ groups: groups.map((g) => g.id), sizes: groups.map((g) => g.bodies.length), events: groups.flatMap((g) => g.bodies) }))),
  });

  /** Three groups of 3,000 (this split puts the first two in part 0, the third in part 1) and a fourth holding an attempt sent again (refused: its key names the first group). */
  async function minute(project: number, bucket: number) {
    const first = fresh(0, 3000);
    const groups = await storeGroups(project, bucket, [first, fresh(1, 3000), fresh(2, 3000), [attempt(first[5]!.event_id, 'again')]]);
    return { groups, before: await readBack(project), samples: [first[5]!, groups[1]!.bodies[2999]!, groups[2]!.bodies[0]!, groups[3]!.bodies[0]!] };
  }

  const bodiesRead = (project: number, samples: AttemptBody[]) =>
    Promise.all(samples.map(async (b) => (await ctx.runtime.stores.events.body(eventKey(project, b.event_id)))?.extra_field));

  it('a run killed after its further parts is finished by the next; a duplicate event id is read once; a group applied late keeps its document', async () => {
    const project = 990_202;
    const bucket = Math.floor(Date.UTC(2026, 10, 1, 13, 0) / REPACK_BUCKET_MS);
    const { groups, before, samples } = await minute(project, bucket);
    const { attempts } = ctx.runtime.stores.events;
    // The killed run wrote its part 1 (the same groups give the same split), not its part 0.
    await attempts.collection.insertOne(partDoc(project, bucket, 1, groups.slice(2)));

    expect(await attempts.repack(project, bucket, groups.map((g) => g.id))).toBe(4);
    expect(await groupDocs(project, groups)).toEqual([]);
    expect(await readBack(project)).toEqual(before);
    expect(await bodiesRead(project, samples)).toEqual(samples.map((b) => b.extra_field).with(3, samples[0]!.extra_field)); // the refused copy's key names the first

    const late = await storeGroups(project, bucket, [fresh(9, 2)]);
    const withLate = await readBack(project);
    expect(await attempts.repack(project, bucket, [late[0]!.id])).toBe(0);
    expect(await groupDocs(project, late)).toHaveLength(1);
    expect(await readBack(project)).toEqual(withLate);
  });

  it('a killed run whose groups were split another way loses nothing', async () => {
    const project = 990_203;
    const bucket = Math.floor(Date.UTC(2026, 10, 1, 14, 0) / REPACK_BUCKET_MS);
    const { groups, before, samples } = await minute(project, bucket);
    const { attempts } = ctx.runtime.stores.events;
    // The killed run saw other groups (one applied late, say) and put only the second group in its part 1.
    await attempts.collection.insertOne(partDoc(project, bucket, 1, [groups[1]!]));

    await attempts.repack(project, bucket, groups.map((g) => g.id));
    // This run's part 0 holds the first two groups; the third and fourth, which its part 0 places in the other
    // run's part 1, keep their documents.
    expect(await groupDocs(project, groups)).toEqual([`${groups[2]!.id}:${project}`, `${groups[3]!.id}:${project}`].sort());
    // Every attempt is still read, by key and by project (the second group's in two parts: docs/decisions.md).
    expect([...new Set(await readBack(project))]).toEqual(before);
    expect(await bodiesRead(project, samples)).toEqual(samples.map((b) => b.extra_field).with(3, samples[0]!.extra_field));
  });

  it("the scheduled job repacks what the workers applied; the security issue's latest event still reads", async () => {
    const p = await makeProject(ctx);
    const project = Number(p.project.id);
    const base = Date.now() - 60_000;
    for (let i = 0; i < 8; i++) {
      const body = { event_id: eventId(), timestamp: new Date(base + i * 1000).toISOString(), security: { kind: 'login_failed', actor: 'alice', ip: '203.0.113.9' } };
      expect((await call(ctx, 'POST', '/api/v1/events', { key: p.secret, body })).status).toBe(202);
    }
    await drained(ctx);
    const get = (path: string) => call(ctx, 'GET', `/api/v1${path}`, { key: p.secret });
    const [issue] = (await get('/issues')).body.issues;
    const shown = (await get(`/issues/${issue.id}`)).body.latest_event;
    expect(shown.security.actor).toBe('alice');
    const before = await readBack(project);

    // Nothing is due yet: the groups' minute ended less than a minute ago.
    const deps = { stores: ctx.runtime.stores, issuesState: ctx.runtime.issuesState, log: ctx.runtime.log };
    expect(await repackAttempts(deps, new Date())).toMatchObject({ groups: 0 });
    const done = await repackAttempts(deps, new Date(Date.now() + 3 * 60_000));
    expect(done.groups).toBeGreaterThan(0);
    const left = await ctx.runtime.stores.events.attempts.collection.find({ project_id: project }, { projection: { _id: 1 } }).toArray();
    expect(left.every((d) => d._id.startsWith(`r:${project}:`))).toBe(true);
    expect(await ctx.runtime.issuesState.repackList(project).due(Date.now() + 3 * 60_000)).toBeNull();
    expect(await readBack(project)).toEqual(before);
    expect((await get(`/issues/${issue.id}`)).body.latest_event).toEqual(shown);
  });

  it('caught up, a run spreads its work out and stops spreading once the worker stops; runs go one at a time', async () => {
    const p = await makeProject(ctx);
    const project = Number(p.project.id);
    const post = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const body = { event_id: eventId(), timestamp: new Date().toISOString(), security: { kind: 'login_failed', actor: `user-${i}`, ip: '203.0.113.10' } };
        expect((await call(ctx, 'POST', '/api/v1/events', { key: p.secret, body })).status).toBe(202);
      }
      await drained(ctx);
    };
    const deps = { stores: ctx.runtime.stores, issuesState: ctx.runtime.issuesState, log: ctx.runtime.log };
    // `now` when the minute of the groups just posted is the latest one due (and so the only one).
    const latestDue = async () => {
      const { bucket } = (await ctx.runtime.issuesState.repackList(project).due(Infinity))!;
      return new Date((bucket + 1) * REPACK_BUCKET_MS + REPACK_AFTER_MS + 1);
    };
    await post(5);
    const before = await readBack(project);
    expect(await repackAttempts(deps, await latestDue(), { spreadMs: 300 })).toMatchObject({ minutes: 1 });
    expect(await readBack(project)).toEqual(before);

    // Stopping: a run asked to spread over ten minutes ends as soon as its steps are done.
    await post(5);
    const stopping = new AbortController();
    stopping.abort();
    expect(await repackAttempts(deps, await latestDue(), { spreadMs: 600_000, signal: stopping.signal })).toMatchObject({ minutes: 1 });

    // One run at a time: while another holds the lease, a run does nothing; once it ends, the next goes on.
    await post(5);
    const other = (await ctx.runtime.issuesState.takeRepackLease(60_000))!;
    expect(await ctx.runtime.issuesState.takeRepackLease(60_000)).toBeNull();
    expect(await repackAttempts(deps, await latestDue(), { spreadMs: 0 })).toEqual({ minutes: 0, groups: 0 });
    await other.end();
    expect(await repackAttempts(deps, await latestDue(), { spreadMs: 0 })).toMatchObject({ minutes: 1 });
  });
});
