/**
 * Keeping the Redis state honest after Redis restarts (docs/operations.md).
 *
 * A project's scripts run only while its `epoch` key holds the run id of the
 * Redis serving them. A restarted Redis (new run id), or one that came back
 * empty, refuses them until `verify` has compared its change counter with
 * the one the last flush recorded in MongoDB:
 * - not behind: Redis kept everything MongoDB has; batches applied after the
 *   last flush and lost with Redis' last second are still on the backlog and
 *   are applied again (their applied marks were lost with them);
 * - behind, or empty while MongoDB has flushed state: `rebuild` recounts the
 *   project from its raw batches.
 * `npx lookout admin recount` runs the same rebuild by hand.
 */
import crypto from 'node:crypto';
import { emptyState, replayPart, type BatchPart, type HourRollup, type ReleaseRollup } from '../domain/release-health.ts';
import { hourOf, STATUSES } from '../domain/sessions.ts';
import type { Logger } from '../log.ts';
import { unpackRequest, type Flushed, type SessionBatchDoc, type SessionsStore } from '../store/sessions.store.ts';
import type { EventDoc, EventsStore } from '../store/events.store.ts';
import type { IssuesStore } from '../store/issues.store.ts';
import { DETECTION_LOOKBACK_MS, type IssuesState } from './issues.state.ts';
import { APPLIED_MEMORY_MS, encodeSession, type SessionState } from './sessions.state.ts';

const REBUILD_LEASE_MS = 10 * 60_000;

export class StateBusyError extends Error {
  constructor(project: number) {
    super(`the Redis state of project ${project} is being verified or rebuilt by another process; retry`);
    this.name = 'StateBusyError';
  }
}

/** Each project's part of a raw batch. */
export function partsOf(batch: SessionBatchDoc): Map<number, BatchPart> {
  const parts = new Map<number, BatchPart>();
  for (const request of batch.requests) {
    let part = parts.get(request.project_id);
    if (!part) parts.set(request.project_id, (part = { sessions: [], aggregates: [] }));
    const entries = unpackRequest(request);
    part.sessions.push(...entries.sessions);
    part.aggregates.push(...entries.aggregates);
  }
  return parts;
}

export function makeStateKeeper(deps: {
  state: SessionState;
  store: SessionsStore;
  issuesState: IssuesState;
  issuesStore: IssuesStore;
  eventsStore: EventsStore;
  log: Logger;
}) {
  const { state, store, issuesState, issuesStore, eventsStore, log } = deps;
  const redis = state.redis;

  /** Runs `fn` holding the project's rebuild lease (a rare path: restarts and recounts only). */
  async function leased<T>(project: number, fn: () => Promise<T>): Promise<T> {
    const key = state.keys(project).rebuild;
    const token = crypto.randomBytes(8).toString('hex');
    if ((await redis.set(key, token, 'PX', REBUILD_LEASE_MS, 'NX')) !== 'OK') throw new StateBusyError(project);
    try {
      return await fn();
    } finally {
      if ((await redis.get(key)) === token) await redis.del(key);
    }
  }

  /** Deletes the project's keys that match any of the patterns (under its prefix). */
  async function dropKeys(project: number, patterns: string[], exact: string[]): Promise<void> {
    const base = state.keys(project).base;
    await redis.del(...exact);
    for (const pattern of patterns) {
      for await (const found of redis.scanStream({ match: `${base}${pattern}`, count: 1000 })) {
        if ((found as string[]).length > 0) await redis.unlink(...(found as string[]));
      }
    }
  }

  /** Recounts the project's sessions from its raw batches into Redis and the MongoDB rollups. Hold the lease, epoch deleted. */
  async function rebuildSessions(project: number, now: Date): Promise<{ batches: number; sessions: number }> {
    const k = state.keys(project);
    const previous = Math.max(Number((await redis.get(k.seq)) ?? 0), await store.flushedSeq(project));
    const seq = previous + 1;

    const replayed = emptyState();
    const applied: [number, string][] = [];
    let batches = 0;
    for await (const batch of store.batchesOf(project)) {
      const part = partsOf(batch).get(project);
      if (!part) continue;
      replayPart(project, replayed, batch._id, part, batch.received_at, state.windowMs);
      if (batch.received_at.getTime() > now.getTime() - APPLIED_MEMORY_MS) applied.push([batch.received_at.getTime(), batch._id]);
      batches += 1;
    }

    // MongoDB first: the mark, then rollups newer than any stored one.
    await store.setFlushedSeq(project, seq);
    const v = <T>(doc: T) => ({ ...doc, v: seq });
    await store.writeRollups({
      hours: [...replayed.hours.values()].map(v) as Flushed<HourRollup>[],
      releases: [...replayed.releases.values()].map(v) as Flushed<ReleaseRollup>[],
    });

    // Then Redis: drop what the project had and write the recounted state.
    await dropKeys(project, ['s:*', 'rh:*', 'rr:*', 'uh:*', 'ur:*'], [k.seq, k.applied, k.dirty]);
    const userTtl = state.windowMs + 3600_000 + 86_400_000;
    const live = (at: Date) => at.getTime() + userTtl > now.getTime();
    const bucket = (d: { environment: string; release: string }) => JSON.stringify([d.environment, d.release]);
    const counts = (c: Record<string, number>, prefix: string) => STATUSES.flatMap((s, i) => [`${prefix}${i}`, String(c[s])]);
    const pipe = redis.pipeline();
    let sessions = 0;
    for (const s of replayed.sessions.values()) {
      const expires = s.started.getTime() + state.windowMs;
      if (expires <= now.getTime()) continue;
      pipe.set(`${k.base}s:${s.sid}`, encodeSession({ ...s, hour: hourOf(s.started) }), 'PXAT', expires);
      sessions += 1;
    }
    for (const u of replayed.users.values()) {
      if (u.hour && !live(u.hour)) continue;
      const key = u.hour ? `${k.base}uh:${u.hour.getTime()}:${bucket(u)}` : `${k.base}ur:${bucket(u)}`;
      pipe.hset(key, u.did, String(STATUSES.indexOf(u.status)));
      if (u.hour) pipe.pexpireat(key, u.hour.getTime() + userTtl);
    }
    for (const h of replayed.hours.values()) {
      if (!live(h.hour)) continue;
      const key = `${k.base}rh:${h.hour.getTime()}:${bucket(h)}`;
      pipe.hset(key, ...counts(h.sessions, 's'), ...counts(h.users, 'u'));
      pipe.pexpireat(key, h.hour.getTime() + userTtl);
    }
    for (const r of replayed.releases.values()) {
      pipe.hset(`${k.base}rr:${bucket(r)}`, ...counts(r.sessions, 's'), ...counts(r.users, 'u'), 'f', String(r.first_seen.getTime()), 'l', String(r.last_seen.getTime()));
    }
    for (let i = 0; i < applied.length; i += 1000) pipe.zadd(k.applied, ...applied.slice(i, i + 1000).flat());
    pipe.set(k.seq, String(seq));
    await pipe.exec();
    log.warn({ project, batches, sessions, seq }, 'rebuilt the session state of a project from its raw batches');
    return { batches, sessions };
  }

  /**
   * Rebuilds the project's issues in Redis: each issue's status as MongoDB
   * has it, its counters recounted from every stored event, and the sign-in
   * attempts of the detectors' look-back. The groups still on the backlog
   * are counted here, so they are marked applied. (A regression an unflushed
   * group caused before Redis lost it is not made again: docs/decisions.md.)
   * Hold the lease, epoch deleted.
   */
  async function rebuildIssues(project: number, now: Date): Promise<{ issues: number }> {
    const k = state.keys(project);
    const eseq = Math.max(Number((await redis.get(k.eseq)) ?? 0), await issuesStore.flushedSeq(project)) + 1;
    const pending = await eventsStore.backlog.find({}).toArray();
    const [docs, errors, attempts] = await Promise.all([
      issuesStore.ofProject(project),
      eventsStore.ofProject(project, 'error'),
      eventsStore.ofProject(project, 'security', new Date(now.getTime() - 2 * DETECTION_LOOKBACK_MS)),
    ]);
    const counted = new Map<string, { count: number; first: EventDoc; last: EventDoc }>();
    for (const e of errors) {
      const c = counted.get(e.fingerprint!);
      if (!c) counted.set(e.fingerprint!, { count: 1, first: e, last: e });
      else {
        c.count += 1;
        if (e.at < c.first.at) c.first = e;
        if (e.at >= c.last.at) c.last = e;
      }
    }
    await dropKeys(project, ['i:*', 'ic:*', 'ag:*', 'aip:*'], [`${k.base}fp`, k.eseq, k.eapplied, k.edirty]);
    const ms = (d: Date | null) => (d ? String(d.getTime()) : '');
    const pipe = redis.pipeline();
    for (const doc of docs) {
      const c = doc.kind === 'error' ? counted.get(doc.fingerprint) : undefined;
      const latest = c ? c.last : doc.latest_event ? { _id: doc.latest_event, at: doc.last_seen } : null;
      pipe.hset(`${k.base}i:${doc._id}`, {
        kind: doc.kind, fingerprint: doc.fingerprint, title: doc.title, exception_type: doc.exception_type ?? '', level: doc.level,
        status: doc.status, first: ms(c ? c.first.at : doc.first_seen), last: ms(c ? c.last.at : doc.last_seen), count: String(c ? c.count : doc.event_count),
        last_release: (c ? c.last.release : doc.last_release) ?? '', regressions: String(doc.regression_count), resolves: String(doc.resolved_count),
        resolved_at: ms(doc.resolved_at), resolved_release: doc.resolved_release ?? '', regressed_at: ms(doc.last_regressed_at),
        regression_kind: doc.last_regression_kind ?? '', created: ms(doc.created_at), latest: latest?._id ?? '', latest_at: ms(latest?.at ?? null),
      });
      if (doc.companies.length > 0) pipe.sadd(`${k.base}ic:${doc._id}`, ...doc.companies);
      pipe.hset(`${k.base}fp`, doc.fingerprint, String(doc._id));
      pipe.hset(k.edirty, String(doc._id), String(eseq));
    }
    for (const a of attempts) {
      if (a.security_kind !== 'login_failed' && a.security_kind !== 'login_succeeded') continue;
      const member = `${a.event_id}|${a.security_kind}|${a.actor ?? ''}`;
      pipe.zadd(`${k.base}ag:${a.group_key}`, a.at.getTime(), member);
      if (a.ip) pipe.zadd(`${k.base}aip:${a.ip}`, a.at.getTime(), member);
    }
    for (const b of pending) pipe.zadd(k.eapplied, b.received_at.getTime(), b._id);
    pipe.set(k.eseq, String(eseq));
    await pipe.exec();
    await issuesState.markDirty(project);
    log.warn({ project, issues: docs.length, eseq }, 'rebuilt the issue state of a project from MongoDB and its stored events');
    return { issues: docs.length };
  }

  return {
    /**
     * Makes the project's state usable on this Redis: what Redis holds is
     * trusted when it is not behind what MongoDB was last given, and rebuilt
     * otherwise (sessions and issues each on their own).
     */
    async verify(project: number, now: Date): Promise<'verified' | 'rebuilt'> {
      const k = state.keys(project);
      const runId = await state.runId();
      if ((await redis.get(k.epoch)) === runId) return 'verified';
      return leased(project, async () => {
        if ((await redis.get(k.epoch)) === runId) return 'verified';
        const held = { sessions: Number((await redis.get(k.seq)) ?? 0), issues: Number((await redis.get(k.eseq)) ?? 0) };
        const flushed = { sessions: await store.flushedSeq(project), issues: await issuesStore.flushedSeq(project) };
        await issuesState.raiseIssueSeq(await issuesStore.maxId());
        let outcome: 'verified' | 'rebuilt' = 'verified';
        if (held.sessions < flushed.sessions) {
          log.warn({ project, held, flushed }, 'Redis lost session state that MongoDB has; rebuilding it from the raw batches');
          await rebuildSessions(project, now);
          outcome = 'rebuilt';
        }
        if (held.issues < flushed.issues) {
          log.warn({ project, held, flushed }, 'Redis lost issue state that MongoDB has; rebuilding it');
          await rebuildIssues(project, now);
          outcome = 'rebuilt';
        }
        await redis.set(k.epoch, runId);
        log.info({ project, held, flushed, outcome }, 'Redis state of the project verified against MongoDB');
        return outcome;
      });
    },
    /** `npx lookout admin recount`: rebuilds the project's sessions and issues whatever Redis holds. */
    rebuild: (project: number, now: Date) =>
      leased(project, async () => {
        await redis.del(state.keys(project).epoch); // the project's scripts refuse to run until the end
        await issuesState.raiseIssueSeq(await issuesStore.maxId());
        const sessions = await rebuildSessions(project, now);
        const issues = await rebuildIssues(project, now);
        await redis.set(state.keys(project).epoch, await state.runId());
        return { ...sessions, ...issues };
      }),
  };
}
export type StateKeeper = ReturnType<typeof makeStateKeeper>;
