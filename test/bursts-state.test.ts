/**
 * The burst path on real Redis (attempts in per-group sorted sets, bursts
 * recorded by apply-burst-3.lua) against its oracle, the pure detectors:
 * random attempt streams, cut into groups of random size (shuffled inside),
 * gathered into jobs of one to three groups as the API gathers them, and
 * delivered in time order with redeliveries, must leave exactly the
 * security issues the detectors find over the whole stream.
 *
 * Delivered out of order across groups, an attempt older than a burst
 * already raised moves the burst's first attempt, its identity: the burst
 * is still recorded in the issue raised first (docs/decisions.md).
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attemptGroupKey } from '../src/domain/client-keys.ts';
import { detectBruteForce, detectStuffing, resumeSettled, type Attempt } from '../src/domain/bursts.ts';
import type { EventEntry } from '../src/queues/jobs/events.job.ts';
import { DETECTION_LOOKBACK_MS } from '../src/state/bursts.state.ts';
import { StateMovedError } from '../src/state/rebuild.ts';
import { projectKeys } from '../src/state/scripts.ts';
import { DEFAULT_ALERTS } from '../src/store/projects.store.ts';
import { processEventGroups } from '../workers/digest/events.ts';
import { startWorkers } from '../workers/main.ts';
import { call, drained, makeProject, startTestContext, type TestContext } from './helpers/context.ts';
import { prng } from './helpers/prng.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => ctx?.close());

const securityEvent = (project: number, actor: string, ip: string, kind: string, at: number): EventEntry => {
  const event_id = crypto.randomBytes(16).toString('hex');
  return {
    _id: `${project}:${event_id}`, project_id: project, event_id, batch: '', kind: 'security', security_kind: kind, actor, ip, group_key: attemptGroupKey(actor, ip),
    fingerprint: null, release: null, at: new Date(at), received_at: new Date(), level: 'error', title: '', culprit: '', exception_type: null, company: null,
  };
};
/** What each detector folds next, on a project whose state is verified. */
async function verifiedReads(...args: Parameters<TestContext['runtime']['burstsState']['detectorReads']>) {
  const reads = await ctx.runtime.burstsState.detectorReads(...args);
  if (reads === 'unverified') throw new Error(`the state of project ${args[0]} is not verified`);
  return reads;
}
const attempts = (list: EventEntry[]): Attempt[] => list.map((e) => ({ id: e.event_id, at: e.at.getTime(), kind: e.security_kind!, actor: e.actor! }));

describe('burst detection through Redis against the pure detectors', () => {
  it.each(Array.from({ length: 12 }, (_, i) => i + 1))('stream %i', async (seed) => {
    const rnd = prng(seed);
    const p = await makeProject(ctx);
    const project = Number(p.project.id);
    const t0 = Date.now() - 3600_000;
    const actors = ['ann', 'bob', 'cy', 'dee', 'eve', 'fay', 'gus', 'hal', 'ida', 'jo', 'kim', 'lu'];
    const ips = ['192.0.2.1', '192.0.2.2'];
    const events: EventEntry[] = Array.from({ length: 120 }, () => {
      const actor = actors[Math.floor(rnd() * (rnd() < 0.5 ? 3 : actors.length))]!;
      const ip = ips[Math.floor(rnd() * ips.length)]!;
      const event_id = crypto.randomBytes(16).toString('hex');
      return {
        _id: `${project}:${event_id}`, project_id: project, event_id, batch: '', kind: 'security' as const,
        security_kind: rnd() < 0.9 ? 'login_failed' : 'login_succeeded', actor, ip, group_key: attemptGroupKey(actor, ip), fingerprint: null, release: null,
        at: new Date(t0 + Math.floor(rnd() * 50 * 60_000)), received_at: new Date(), level: 'error', title: '', culprit: '', exception_type: null, company: null,
      };
    });
    // groups of 1 to 10 events in time order, shuffled inside, a quarter of them delivered twice
    events.sort((a, b) => a.at.getTime() - b.at.getTime());
    const groups: EventEntry[][] = [];
    for (let i = 0; i < events.length; ) {
      const n = 1 + Math.floor(rnd() * 10);
      groups.push(events.slice(i, i + n).sort(() => rnd() - 0.5));
      i += n;
    }
    // jobs of 1 to 3 groups, as the API gathers them; a quarter of the jobs delivered twice, and now and then
    // a group of the previous job in the next one (a swept group whose first job did run)
    const jobs: { id: string; received_at: string; events: EventEntry[] }[][] = [];
    for (let i = 0; i < groups.length; ) {
      const n = 1 + Math.floor(rnd() * 3);
      const job = groups.slice(i, i + n).map((events, k) => ({ id: `g-${seed}-${i + k}`, received_at: new Date().toISOString(), events }));
      if (jobs.length > 0 && rnd() < 0.2) job.unshift(jobs[jobs.length - 1]![0]!);
      jobs.push(job);
      i += n;
    }
    for (const job of jobs) {
      await processEventGroups({ groups: job }, ctx.runtime, new Date());
      if (rnd() < 0.25) await processEventGroups({ groups: job }, ctx.runtime, new Date());
    }

    const expected: { detector: string; count: number; first: number; last: number }[] = [];
    for (const key of new Set(events.map((e) => e.group_key!))) {
      for (const b of detectBruteForce(attempts(events.filter((e) => e.group_key === key)), DEFAULT_ALERTS)) expected.push({ detector: 'brute_force', count: b.attempt_ids.length, first: b.first_seen, last: b.last_seen });
    }
    for (const ip of ips) {
      for (const b of detectStuffing(attempts(events.filter((e) => e.ip === ip)), DEFAULT_ALERTS)) expected.push({ detector: 'credential_stuffing', count: b.attempt_ids.length, first: b.first_seen, last: b.last_seen });
    }

    const snap = await ctx.runtime.issuesState.snapshot(project);
    const actual = snap.issues.map(({ doc }) => ({ detector: doc.exception_type!, count: doc.event_count, first: doc.first_seen.getTime(), last: doc.last_seen.getTime() }));
    const order = (a: { detector: string; first: number; count: number }, b: { detector: string; first: number; count: number }) => a.detector.localeCompare(b.detector) || a.first - b.first || a.count - b.count;
    expect(expected.length).toBeGreaterThan(0);
    expect(actual.sort(order)).toEqual(expected.sort(order));
  });
});

describe('sign-in attempts in Redis', () => {
  it('reads back each attempt with its actor as sent, separators and all, from both sets', async () => {
    const p = await makeProject(ctx);
    const project = Number(p.project.id);
    const state = ctx.runtime.issuesState;
    const base = state.keys(project).base;
    const actor = 'ann|192.0.2.9\n:{x}\0';
    const ip = '192.0.2.1';
    const group = attemptGroupKey(actor, ip);
    const [a, b] = [crypto.randomBytes(16).toString('hex'), crypto.randomBytes(16).toString('hex')];
    await state.replaceAttempts(project, [
      { event_id: a, at: new Date(1000), kind: 'login_failed', actor, group, ip },
      { event_id: b, at: new Date(2000), kind: 'login_succeeded', actor, group, ip },
    ]);
    const expected = [
      { id: a, at: 1000, kind: 'login_failed', actor },
      { id: b, at: 2000, kind: 'login_succeeded', actor },
    ];
    const since = new Date(0);
    await ctx.runtime.keeper.verify(project, new Date()); // as a worker's job has before it reads
    const reads = await verifiedReads(project, [{ kind: 'ag', key: group, actor, ip, since }, { kind: 'aip', key: ip, actor: null, ip, since }], DEFAULT_ALERTS);
    expect(reads.map((r) => r.fresh)).toEqual([expected, expected]);
    expect((await state.redis.zrange(`${base}ag:${group}`, 1, 1))[0]).toHaveLength(24); // 22 + '|' + kind
  });
});

describe('saved detector folds', () => {
  it('a long attack folded job by job, with an attempt arriving late, leaves the issues one fold from the start finds, reading only recent attempts', async () => {
    const p = await makeProject(ctx);
    const project = Number(p.project.id);
    const t0 = Date.now() - 3 * 3600_000;
    const ip = '198.51.100.7';
    const others = Array.from({ length: 12 }, (_, i) => `user${i}`);
    const events: EventEntry[] = [];
    // two and a half hours: ann fails every 20 s (a burst every quiet period); the others fail in turn every 30 s
    // (credential stuffing); ann signs in now and then
    for (let s = 0; s < 9000; s += 10) {
      if (s % 20 === 0) events.push(securityEvent(project, 'ann', ip, s % 1700 === 0 ? 'login_succeeded' : 'login_failed', t0 + s * 1000));
      if (s % 30 === 0) events.push(securityEvent(project, others[(s / 30) % others.length]!, ip, 'login_failed', t0 + s * 1000 + 1));
    }
    // one failure of ann sent an hour late, a minute after her first burst was raised
    const late = securityEvent(project, 'ann', ip, 'login_failed', t0 + 147_000);
    const jobs: EventEntry[][] = [];
    for (let i = 0; i < events.length; i += 6) jobs.push(events.slice(i, i + 6));
    jobs.splice(Math.floor(jobs.length / 2), 0, [late]);
    let reads = 0;
    for (const [i, job] of jobs.entries()) {
      await processEventGroups({ groups: [{ id: `long-${i}`, received_at: new Date().toISOString(), events: job }] }, ctx.runtime, new Date());
      if (i > 0 && job !== jobs[Math.floor(jobs.length / 2)]) {
        // what the worker reads for a job after this one
        const since = new Date(Math.max(...job.map((e) => e.at.getTime())) - DETECTION_LOOKBACK_MS);
        const [read] = await verifiedReads(project, [{ kind: 'aip', key: ip, actor: null, ip, since }], DEFAULT_ALERTS);
        // the saved fold holds all but the last DETECTION_SETTLE_MS of attempts
        expect(read!.state).not.toBeNull();
        expect(read!.fresh.length).toBeLessThan(10);
        reads++;
      }
    }
    expect(reads).toBeGreaterThan(100);

    const all = [...events, late];
    const expected = [
      ...detectBruteForce(attempts(all.filter((e) => e.actor === 'ann')), DEFAULT_ALERTS).map((b) => ({ detector: 'brute_force', count: b.count, first: b.first_seen, last: b.last_seen })),
      ...detectStuffing(attempts(all), DEFAULT_ALERTS).map((b) => ({ detector: 'credential_stuffing', count: b.count, first: b.first_seen, last: b.last_seen })),
    ];
    const snap = await ctx.runtime.issuesState.snapshot(project);
    const actual = snap.issues.map(({ doc }) => ({ detector: doc.exception_type!, count: doc.event_count, first: doc.first_seen.getTime(), last: doc.last_seen.getTime() }));
    const order = (a: { detector: string; first: number }, b: { detector: string; first: number }) => a.detector.localeCompare(b.detector) || a.first - b.first;
    expect(expected.filter((b) => b.detector === 'brute_force').length).toBeGreaterThan(3);
    expect(expected.filter((b) => b.detector === 'credential_stuffing').length).toBeGreaterThan(3);
    expect(actual.sort(order)).toEqual(expected.sort(order));
  });

  it('a fold is not saved over one saved since it was read, nor when an attempt it should hold arrived since', async () => {
    const p = await makeProject(ctx);
    const project = Number(p.project.id);
    const state = ctx.runtime.issuesState;
    const t0 = Date.now() - 3600_000;
    const key = { kind: 'ag' as const, key: attemptGroupKey('bo', '203.0.113.5'), actor: 'bo', ip: '203.0.113.5', since: new Date(t0 - 86400_000) };
    await ctx.runtime.keeper.verify(project, new Date());
    const apply = (id: string, ats: number[]) =>
      state.apply(project, [{ id, receivedAt: new Date(), errors: [], attempts: ats.map((at) => ({ event_id: crypto.randomBytes(16).toString('hex'), at: new Date(at), kind: 'login_failed', actor: 'bo', group: key.key, ip: '203.0.113.5' })), packed: false }]);
    const settings = { ...DEFAULT_ALERTS, threshold: 100 }; // no burst: the folds only count
    const fold = async () => {
      const [read] = await verifiedReads(project, [key], settings);
      return { read: read!, folded: resumeSettled('brute_force', settings, read!.state, read!.leaving, read!.fresh, t0 + 1e9)! };
    };
    await apply('s-1', [t0, t0 + 1000, t0 + 2000]);
    const first = await fold();
    expect(await ctx.runtime.burstsState.saveDetector(project, key, first.read, first.folded.state)).toBe(true);

    // two folds read the same saved one: the second to save finds the first's
    await apply('s-2', [t0 + 3000]);
    const [a, b] = [await fold(), await fold()];
    expect(a.read.state).toEqual(first.folded.state);
    expect(await ctx.runtime.burstsState.saveDetector(project, key, a.read, a.folded.state)).toBe(true);
    expect(await ctx.runtime.burstsState.saveDetector(project, key, b.read, b.folded.state)).toBe(false);

    // an attempt inside the span a fold read, arriving after the read
    await apply('s-3', [t0 + 4000]);
    const c = await fold();
    await apply('s-4', [t0 + 3500]);
    expect(await ctx.runtime.burstsState.saveDetector(project, key, c.read, c.folded.state)).toBe(false);

    // an attempt older than the saved fold's newest deletes it: the next fold starts from the look-back
    const before = await fold();
    expect(before.read.state).not.toBeNull();
    await apply('s-5', [t0 + 500]);
    const after = await fold();
    expect(after.read.state).toBeNull();
    expect(after.read.fresh).toHaveLength(7);
  });
});

describe('one attack seen by two folds', () => {
  const burstsOf = async (project: number) =>
    (await ctx.runtime.issuesState.snapshot(project)).issues
      .map(({ doc }) => ({ detector: doc.exception_type!, count: doc.event_count, first: doc.first_seen.getTime(), last: doc.last_seen.getTime() }))
      .sort((a, b) => a.first - b.first);
  const detected = (events: EventEntry[]) =>
    detectBruteForce(attempts(events), DEFAULT_ALERTS).map((b) => ({ detector: 'brute_force', count: b.count, first: b.first_seen, last: b.last_seen }));

  it('jobs applied newest first, or side by side, leave the issues the detectors find over all the attempts', async () => {
    const p = await makeProject(ctx);
    const project = Number(p.project.id);
    // sent days late, as an installation catching up would: the issues' spans are kept by the attempts' time
    const t0 = Date.now() - 6 * 86400_000;
    // two attacks an hour apart (the quiet period is half an hour): 30 failures 5 s apart, then 10
    const first = Array.from({ length: 30 }, (_, i) => securityEvent(project, 'bob', '192.0.2.9', 'login_failed', t0 + i * 5000));
    const second = Array.from({ length: 10 }, (_, i) => securityEvent(project, 'bob', '192.0.2.9', 'login_failed', t0 + 3600_000 + i * 5000));
    const jobsOf = (events: EventEntry[]) => Array.from({ length: events.length / 5 }, (_, i) => events.slice(5 * i, 5 * i + 5));
    const run = (events: EventEntry[], i: number) => processEventGroups({ groups: [{ id: `late-${project}-${i}-${events[0]!.event_id}`, received_at: new Date().toISOString(), events }] }, ctx.runtime, new Date());
    // the first attack newest job first; the second's two newest jobs side by side, then the rest newest first
    for (const [i, job] of jobsOf(first).reverse().entries()) await run(job, i);
    const jobs = jobsOf(second).reverse();
    await Promise.all([run(jobs[0]!, 100), run(jobs[1]!, 101)]);
    for (const [i, job] of jobs.slice(2).entries()) await run(job, 102 + i);

    const expected = detected([...first, ...second]);
    expect(expected).toHaveLength(2);
    expect(await burstsOf(project)).toEqual(expected);
  });

  it('after a rebuild from MongoDB, an older attempt of an attack raised before is still counted in its issue', async () => {
    const { project, secret } = await makeProject(ctx);
    const id = Number(project.id);
    const t0 = Date.now() - 3600_000;
    const bodies = Array.from({ length: 12 }, (_, i) => ({ event_id: crypto.randomBytes(16).toString('hex'), timestamp: new Date(t0 + i * 5000).toISOString(), security: { kind: 'login_failed', actor: 'cy', ip: '192.0.2.10' } }));
    const workers = await startWorkers(ctx.runtime, { queues: ['events'] });
    try {
      const post = async (list: typeof bodies) => {
        for (const body of list) expect((await call(ctx, 'POST', '/api/v1/events', { key: secret, body })).status).toBe(202);
        await drained(ctx);
      };
      await post(bodies.slice(6)); // raises the burst, named by its seventh attempt, and flushes it
      await ctx.runtime.keeper.rebuild(id, new Date());
      await post(bodies.slice(0, 6));
    } finally {
      await workers.close();
    }
    const { issues } = (await call(ctx, 'GET', '/api/v1/issues', { key: secret })).body as { issues: { exception_type: string; event_count: number; first_seen: string }[] };
    expect(issues.map((i) => ({ type: i.exception_type, count: i.event_count, first: i.first_seen }))).toEqual([{ type: 'brute_force', count: 12, first: bodies[0]!.timestamp }]);
  });
});

describe('a rebuild between a job applying sign-in attempts and judging them (issue 66)', () => {
  it('fails the job, to be retried, rather than judging what the rebuild has not written back; the retry raises the burst', async () => {
    const project = Number((await makeProject(ctx)).project.id);
    const now = Date.now();
    const events = Array.from({ length: 8 }, (_, i) => securityEvent(project, 'eve', '198.51.100.66', 'login_failed', now - 8000 + i * 1000));
    const payload = { groups: [{ id: `rebuilt-${project}`, received_at: new Date().toISOString(), events }] };
    const { epoch } = projectKeys(ctx.runtime.config.queuePrefix, project);
    // the job applies its attempts; before it judges them a rebuild begins: the epoch deleted, the state dropped
    const rebuildBegins = {
      ...ctx.runtime,
      bursts: {
        detect: async (...args: Parameters<TestContext['runtime']['bursts']['detect']>) => {
          await ctx.runtime.queues.connection.del(epoch);
          await ctx.runtime.issuesState.beginReplace(project);
          return ctx.runtime.bursts.detect(...args);
        },
      },
    };
    await expect(processEventGroups(payload, rebuildBegins, new Date())).rejects.toThrow(StateMovedError);
    // the rebuild writes the attempts back and the state is verified again; the job's retry judges them
    await ctx.runtime.issuesState.replaceAttempts(project, events.map((e) => ({ event_id: e.event_id, at: e.at, kind: e.security_kind!, actor: e.actor!, group: e.group_key!, ip: e.ip! })));
    await ctx.runtime.keeper.verify(project, new Date());
    await processEventGroups(payload, ctx.runtime, new Date());
    const issues = (await ctx.runtime.issuesState.snapshot(project)).issues.map(({ doc }) => ({ detector: doc.exception_type, count: doc.event_count }));
    expect(issues).toEqual([{ detector: 'brute_force', count: 8 }]);
  });
});
