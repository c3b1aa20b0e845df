/**
 * The issue rule on a real Redis against its oracle, the pure src/domain/issue-lifecycle.ts: random sequences of
 * error events (apply-events-4.lua), bursts (apply-burst-3.lua) and status changes by hand (set-issue-status-3.lua:
 * resolves, in the next release too, ignores for good, until a count or a time, unresolves) on an error issue and a
 * security issue must leave both issues in the same state, report the same regressions and ended ignores, and put
 * one `issue.regressed` trigger in the outbox per regression.
 */
import crypto from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { NEW_ISSUE, occur, setStatus, type IssueChange, type IssueLife, type StatusChange } from '../src/domain/issue-lifecycle.ts';
import { makeBurstsState, type BurstsState } from '../src/state/bursts.state.ts';
import { makeIssuesState, type IssuesState } from '../src/state/issues.state.ts';
import { prng } from './helpers/prng.ts';

const SEQUENCES = 2_000;
const ERROR_ISSUE = 1;
const SECURITY_ISSUE = 2;
const RELEASES = ['', '1.0', '1.1', '2.0'];

let redis: Redis;
let issues: IssuesState;
let bursts: BurstsState;
let runId: string;
beforeAll(async () => {
  redis = new Redis(inject('redisUrl'));
  const prefix = `lookout_test_${crypto.randomBytes(4).toString('hex')}`;
  issues = makeIssuesState(redis, { prefix });
  bursts = makeBurstsState(redis, { prefix });
  runId = /run_id:(\w+)/.exec(await redis.info('server'))![1]!;
});
afterAll(() => redis.disconnect());

/** One issue's state as the rule sees it, read from its hash. */
async function stored(project: number, issue: number): Promise<IssueLife | undefined> {
  const h = await redis.hgetall(`${issues.keys(project).base}i:${issue}`);
  if (!h.status) return undefined;
  const num = (v: string | undefined) => (v === undefined || v === '' ? null : Number(v));
  return {
    status: h.status as IssueLife['status'],
    count: Number(h.count),
    regressions: Number(h.regressions),
    resolves: Number(h.resolves),
    resolvedAt: num(h.resolved_at),
    resolvedRelease: h.resolved_release ?? '',
    resolvedNext: h.resolved_next === '1',
    ignoreCount: num(h.ignore_count),
    ignoreUntil: num(h.ignore_until),
    regressedAt: num(h.regressed_at),
    regressionKind: (h.regression_kind || null) as IssueLife['regressionKind'],
    regressedRelease: h.regression_kind ? (h.regressed_release ?? '') : null,
  };
}

const modeOf = (c: StatusChange): string =>
  c.status === 'resolved' ? (c.inNextRelease ? 'next' : '') : c.status === 'ignored' ? (c.untilCount !== undefined ? `count:${c.untilCount}` : c.until !== undefined ? `until:${c.until}` : '') : '';

/** The oracle's changes as the scripts report them (without `created`). */
const reported = (changes: IssueChange[]) => changes.filter((c) => c.what !== 'created');

async function runSequence(seed: number) {
  const rnd = prng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
  const project = 10_000 + seed;
  const k = issues.keys(project);
  await redis.set(k.epoch, runId);

  // the oracle: both issues, the project's releases by first event, the error issue's newest event
  const oracle = new Map<number, IssueLife>();
  const releases = new Map<string, number>();
  let newest = { at: -Infinity, release: '' };
  let attempts = 0;
  let t = 1_700_000_000_000 + seed * 1000;
  const steps = 6 + Math.floor(rnd() * 14);

  for (let step = 0; step < steps; step++) {
    t += pick([0, 1, 500, 2000, 60_000]);
    const roll = rnd();
    if (roll < 0.4) {
      // an error event, sent at or a little before it is received
      const release = pick(RELEASES);
      const at = t - pick([0, 0, 1000, 5000]);
      if (release !== '' && !(releases.get(release)! <= at)) releases.set(release, at);
      if (at >= newest.at) newest = { at, release };
      const { issue, changes } = occur(oracle.get(ERROR_ISSUE), { at: t, release, count: { add: 1 } }, releases);
      oracle.set(ERROR_ISSUE, issue);
      const event = `${project}:${crypto.randomBytes(16).toString('hex')}`;
      const answer = await issues.apply(
        project,
        [
          {
            id: `g-${seed}-${step}`,
            receivedAt: new Date(t),
            errors: [
              { event, issue: ERROR_ISSUE, issue_kind: 'error', at: new Date(at), release: release || null, level: 'error', title: 'E', culprit: '', exception_type: 'E', company: null, environment: null, fingerprint: 'f' },
            ],
            attempts: [],
          },
        ],
        't',
      );
      expect(answer.code).toBe('applied');
      expect(answer.changes.map(({ issue: _, at, ...c }) => ({ ...c, at: at.getTime() }))).toEqual(
        reported(changes).map((c) => ({ ...c, release: c.release || null, regression_kind: c.what === 'regressed' ? c.regression_kind : null })),
      );
    } else if (roll < 0.7) {
      // a burst that holds an attempt received now; a burst only grows, but a fold may see fewer than the issue holds
      attempts = Math.max(1, attempts + pick([-2, 0, 1, 3]));
      const { issue, changes } = occur(oracle.get(SECURITY_ISSUE), { at: t, release: '', count: { attempts } }, releases);
      oracle.set(SECURITY_ISSUE, issue);
      const answer = await bursts.applyBurst(
        project,
        SECURITY_ISSUE,
        {
          fingerprint: 'burst',
          title: 'Brute force',
          detector: 'brute_force',
          group: 'g',
          first_id: 'a0',
          last_id: `a${step}`,
          actor: 'ann',
          ip: '192.0.2.1',
          count: attempts,
          first: new Date(1_700_000_000_000),
          last: new Date(t),
          latest: `${project}:a${step}`,
          latest_at: new Date(t),
          received: new Date(t),
          policy: '',
        },
        { notify: true, decisionSeconds: pick([0, 60]), now: new Date(t) },
      );
      expect(answer.code).not.toBe('unverified');
      expect(answer.changes.map(({ at, ...c }) => ({ ...c, at: at.getTime() }))).toEqual(
        reported(changes).map((c) => ({ ...c, issue: SECURITY_ISSUE, release: null, regression_kind: c.what === 'regressed' ? c.regression_kind : null })),
      );
    } else {
      // a status change by hand, on either issue
      const id = pick([ERROR_ISSUE, SECURITY_ISSUE]);
      const change = pick<StatusChange>([
        { status: 'unresolved' },
        { status: 'resolved' },
        { status: 'resolved', inNextRelease: true },
        { status: 'ignored' },
        { status: 'ignored', untilCount: 1 + Math.floor(rnd() * 3) },
        { status: 'ignored', until: t + pick([0, 1000, 90_000]) },
      ]);
      const before = oracle.get(id);
      const answer = await issues.setStatus(project, id, change.status, new Date(t), modeOf(change));
      expect(answer).toBe(before ? 'set' : 'not_found');
      if (before) oracle.set(id, setStatus(before, change, t, id === ERROR_ISSUE ? newest.release : '', releases));
    }
    for (const id of [ERROR_ISSUE, SECURITY_ISSUE]) {
      expect(await stored(project, id), `seed ${seed}, step ${step}, issue ${id}`).toEqual(oracle.get(id) ?? undefined);
    }
  }

  // one issue.regressed trigger per regression, for each issue
  const triggers = (await redis.xrange(`${k.base}nq`, '-', '+')).map(([, fields]) => JSON.parse(fields[1]!) as { event: string; issue: number });
  for (const id of [ERROR_ISSUE, SECURITY_ISSUE]) {
    expect(triggers.filter((x) => x.event === 'issue.regressed' && Number(x.issue) === id).length).toBe(oracle.get(id)?.regressions ?? 0);
  }
  await redis.del(k.epoch);
}

describe('the issue rule: the scripts against the pure rule', () => {
  it(`${SEQUENCES} random sequences of events, bursts and status changes`, async () => {
    for (let seed = 1; seed <= SEQUENCES; seed++) await runSequence(seed);
  }, 240_000);

  it('the oracle itself: a security issue resolved in the next release regresses once a newer release is out', () => {
    const releases = new Map([['1.0', 1000]]);
    const resolved = setStatus({ ...NEW_ISSUE, count: 5 }, { status: 'resolved', inNextRelease: true }, 2000, '', releases);
    expect(resolved.resolvedRelease).toBe('1.0');
    const burst = { at: 3000, release: '', count: { attempts: 8 } };
    expect(occur(resolved, burst, releases).changes).toEqual([]);
    releases.set('1.1', 2500);
    expect(occur(resolved, burst, releases).changes).toEqual([{ what: 'regressed', n: 1, at: 3000, release: '', regression_kind: 'new_release' }]);
  });
});
