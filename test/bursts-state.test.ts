/**
 * The burst path on real Redis (attempts in per-group sorted sets, bursts
 * recorded by apply-burst-3.lua) against its oracle, the pure detectors:
 * random attempt streams, cut into groups of random size (shuffled inside),
 * gathered into jobs of one to three groups as the API gathers them, and
 * delivered in time order with redeliveries, must leave exactly the
 * security issues the detectors find over the whole stream.
 *
 * Delivered out of order across groups, an attempt older than a burst
 * already raised can move the burst's first attempt, its identity, and
 * leave a second issue: docs/decisions.md.
 */
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectBruteForce, detectStuffing, type Attempt } from '../src/domain/bursts.ts';
import type { EventEntry } from '../src/services/events.service.ts';
import { DEFAULT_ALERTS } from '../src/store/projects.store.ts';
import { processEventGroups } from '../workers/events-process.handler.ts';
import { makeProject, startTestContext, type TestContext } from './helpers/context.ts';
import { prng } from './helpers/prng.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => ctx?.close());

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
        security_kind: rnd() < 0.9 ? 'login_failed' : 'login_succeeded', actor, ip, group_key: `${actor}|${ip}`, fingerprint: null, release: null,
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

    const attempts = (list: EventEntry[]): Attempt[] => list.map((e) => ({ id: e.event_id, at: e.at.getTime(), kind: e.security_kind!, actor: e.actor! }));
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
  it('reads members written before (hex id, kind name, actor in both sets) beside the compact ones', async () => {
    const p = await makeProject(ctx);
    const project = Number(p.project.id);
    const state = ctx.runtime.issuesState;
    const base = state.keys(project).base;
    const [old, compact] = [crypto.randomBytes(16).toString('hex'), crypto.randomBytes(16).toString('hex')];
    await state.redis.zadd(`${base}ag:ann|192.0.2.1`, 1000, `${old}|login_failed|ann`);
    await state.redis.zadd(`${base}aip:192.0.2.1`, 1000, `${old}|login_failed|ann`);
    await state.replaceAttempts(project, [{ event_id: compact, at: new Date(2000), kind: 'login_succeeded', actor: 'ann', group: 'ann|192.0.2.1', ip: '192.0.2.1' }]);
    const expected = [
      { id: old, at: 1000, kind: 'login_failed', actor: 'ann' },
      { id: compact, at: 2000, kind: 'login_succeeded', actor: 'ann' },
    ];
    const since = new Date(0);
    expect(await state.attemptsOf(project, [{ kind: 'ag', key: 'ann|192.0.2.1', since }, { kind: 'aip', key: '192.0.2.1', since }])).toEqual([expected, expected]);
    expect((await state.redis.zrange(`${base}ag:ann|192.0.2.1`, 1, 1))[0]).toHaveLength(24); // 22 + '|' + kind
  });
});
