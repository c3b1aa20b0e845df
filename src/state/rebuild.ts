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
import { setTimeout as sleep } from 'node:timers/promises';
import { UnavailableError } from '../errors.ts';
import type { BatchPart } from '../domain/release-health.ts';
import type { Logger } from '../log.ts';
import { unpackRequest, type SessionBatchDoc, type SessionsStore, type StoredAt } from '../store/sessions.store.ts';
import { eventImpact } from '../domain/event-impact.ts';
import { payloadOf, type EventsStore } from '../store/events.store.ts';
import type { FeedbackStore } from '../store/feedback.store.ts';
import type { ExpiredStore } from '../store/expired.store.ts';
import type { IssueDoc, IssuesStore } from '../store/issues.store.ts';
import { ATTEMPT_KINDS, DETECTION_LOOKBACK_MS, type AttemptEntry } from './bursts.state.ts';
import type { CountedEvent } from './issue-replace.ts';
import type { IssuesState } from './issues.state.ts';
import { takeLease } from './lease.ts';
import { APPLIED_MEMORY_MS, rollupDocs, SESSION_LAYOUT, type RecountProgress, type SessionState } from './sessions.state.ts';

/**
 * The rebuild lease lasts this long unless its holder renews it (every third of it while it works): a holder that
 * died, or could not release it because Redis went away at that moment (a failover), blocks the project no longer.
 */
const REBUILD_LEASE_MS = 30_000;

/**
 * The layout of a project's issue state in Redis. A project whose keys follow another one has its issue state
 * rebuilt once from MongoDB, at its next verify: a change of the keys' layout raises this number.
 */
export const ISSUE_LAYOUT = '7';
/** How long a call waits for another process verifying the project's state, and how often it looks. */
const VERIFY_WAIT_MS = 5000;
const VERIFY_POLL_MS = 50;
/** A recount stopped halfway is resumed when run again within this long; an older one starts over. */
const RECOUNT_RESUME_MS = 24 * 3600_000;
/** Events and attempts written to Redis per call while a rebuild streams them. */
const REPLACE_CHUNK = 2000;
/** How often a recount says how far it got. */
const RECOUNT_REPORT_MS = 5000;

export class StateBusyError extends Error {
  constructor(project: number) {
    super(`the Redis state of project ${project} is being verified or rebuilt by another process; retry`);
    this.name = 'StateBusyError';
  }
}

/**
 * The project's Redis state changed under a job (Redis restarted, or a recount began) and is not verified again
 * yet: nothing was applied, and the job is retried, as BullMQ retries any failure.
 */
export class StateMovedError extends Error {
  constructor(project: number, during: string) {
    super(`the Redis state of project ${project} changed during ${during}; retrying`);
    this.name = 'StateMovedError';
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

/** Whether a recount that stopped at `progress` had replayed the batch read from `from` (documents in the order read). */
function replayedBefore(from: StoredAt, progress: RecountProgress): boolean {
  if (from.at !== progress.at) return from.at < progress.at;
  if (from.id !== progress.id) return from.id < progress.id;
  return from.index <= (progress.index ?? 0);
}

export function makeStateKeeper(deps: {
  state: SessionState;
  store: SessionsStore;
  issuesState: IssuesState;
  issuesStore: IssuesStore;
  eventsStore: EventsStore;
  feedbackStore: FeedbackStore;
  expiredStore: ExpiredStore;
  log: Logger;
}) {
  const { state, store, issuesState, issuesStore, eventsStore, feedbackStore, expiredStore, log } = deps;
  const redis = state.redis;

  /** Runs `fn` holding the project's rebuild lease (a rare path: restarts and recounts only). */
  async function leased<T>(project: number, fn: () => Promise<T>): Promise<T> {
    const lease = await takeLease(redis, state.keys(project).rebuild, REBUILD_LEASE_MS);
    if (!lease) throw new StateBusyError(project);
    const renew = setInterval(() => void lease.renew(REBUILD_LEASE_MS).catch(() => {}), REBUILD_LEASE_MS / 3); // Redis away: the lease lapses by itself
    try {
      return await fn();
    } finally {
      clearInterval(renew);
      await lease.end().catch(() => {});
    }
  }

  /**
   * Recounts the project's sessions from its raw batches into Redis and the MongoDB rollups, streaming: the
   * batches are replayed oldest first through the merge script into a scratch state (src/state/sessions.state.ts),
   * so memory holds one batch whatever the volume, and a recount killed halfway resumes where it stopped.
   * Hold the lease, epoch deleted.
   */
  async function rebuildSessions(project: number, now: Date, report?: (p: RecountProgress) => void): Promise<{ batches: number; sessions: number }> {
    const k = state.keys(project);
    const previous = Math.max(Number((await redis.get(k.seq)) ?? 0), await store.flushedSeq(project));
    const seq = previous + 1;

    const scratch = state.recount(project);
    const found = await scratch.progress();
    const resumable = found && found.phase === 'replay' && now.getTime() - found.started < RECOUNT_RESUME_MS;
    let progress = resumable ? { ...found, resumed: found.batches } : await scratch.begin(now);
    if (resumable) log.warn({ project, batches: found.batches }, 'resuming a recount of the sessions that stopped halfway');
    const applied: [number, string][] = [];
    let reported = Date.now();
    for await (const { batch, from } of store.batchesOf(project)) {
      const at = batch.received_at.getTime();
      if (at > now.getTime() - APPLIED_MEMORY_MS) applied.push([at, batch._id]);
      if (replayedBefore(from, progress)) continue;
      const entries = await scratch.replay(batch._id, batch.received_at, partsOf(batch).get(project)!);
      progress = { ...progress, ...from, batches: progress.batches + 1, entries: progress.entries + entries };
      await scratch.mark(progress);
      if (Date.now() - reported >= RECOUNT_REPORT_MS) {
        reported = Date.now();
        report?.(progress);
        log.info({ project, batches: progress.batches, entries: progress.entries, through: batch.received_at }, 'recounting the sessions of a project');
      }
    }
    report?.(progress);

    // MongoDB first: the mark, then rollups newer than any stored one.
    await store.setFlushedSeq(project, seq);
    for await (const rollups of scratch.rollups()) await store.writeRollups(rollupDocs(project, rollups, seq));

    // Then Redis: the recounted state in place of what the project had.
    await scratch.adopt(progress, { seq, applied, now });
    log.warn({ project, batches: progress.batches, entries: progress.entries, seq }, 'rebuilt the session state of a project from its raw batches');
    return { batches: progress.batches, sessions: progress.entries };
  }

  /**
   * Rebuilds the project's issues in Redis: each issue's status as MongoDB
   * has it, its counters recounted from the stored events, and the sign-in
   * attempts of the detectors' look-back. Each group of events is counted
   * once, here or by its job: a group on the backlog is not flushed, and
   * MongoDB may hold some of its issues and not others, so its events are
   * left to its job (waiting, or swept); every other group counted here is
   * marked applied, so that one stored while this ran is not counted again.
   * (A regression an unflushed group caused before Redis lost it is not made
   * again: docs/decisions.md.) Hold the lease, epoch deleted.
   */
  async function rebuildIssues(project: number, now: Date): Promise<{ issues: number }> {
    const k = state.keys(project);
    const eseq = Math.max(Number((await redis.get(k.eseq)) ?? 0), await issuesStore.flushedSeq(project)) + 1;
    // The backlog before the events: a marker is written before its group's events.
    const pending = new Set((await eventsStore.backlog.collection.find({}, { projection: { _id: 1 } }).toArray()).map((m) => m._id));
    const [docs, expired] = await Promise.all([issuesStore.ofProject(project), expiredStore.ofProject(project)]);
    const issueOf = new Map(docs.map((d) => [d.fingerprint, d._id]));
    // User feedback, linked again through its event's fingerprint (read while the events stream by).
    const feedback = await feedbackStore.ofProject(project).toArray();
    const fingerprintOf = new Map(feedback.flatMap((f) => (f.event_id ? [[f.event_id, null as string | null] as const] : [])));
    await issuesState.beginReplace(project);

    // The stored error events, streamed: each written to its issue's lists in chunks, and folded into its counts.
    type Seen = { at: Date; _id: string; release: string | null };
    const counted = new Map<string, { count: number; first: Seen; last: Seen }>();
    const remembered = now.getTime() - APPLIED_MEMORY_MS;
    const applied = new Map<string, Date>();
    const chunk: CountedEvent[] = [];
    for await (const e of eventsStore.errorsOf(project)) {
      if (pending.has(e.batch)) continue;
      const seen = { at: e.at, _id: e._id, release: e.release };
      const c = counted.get(e.fingerprint!);
      if (!c) counted.set(e.fingerprint!, { count: 1, first: seen, last: seen });
      else {
        c.count += 1;
        if (e.at < c.first.at) c.first = seen;
        if (e.at >= c.last.at) c.last = seen;
      }
      if (e.received_at.getTime() > remembered) applied.set(e.batch, e.received_at);
      if (fingerprintOf.has(e.event_id)) fingerprintOf.set(e.event_id, e.fingerprint!);
      const issue = issueOf.get(e.fingerprint!);
      if (issue !== undefined) {
        const { user, tags } = eventImpact(payloadOf(e));
        chunk.push({ issue, event_id: e.event_id, at: e.at, release: e.release, environment: e.environment ?? null, company: e.company ?? null, user, tags });
      }
      if (chunk.length >= REPLACE_CHUNK) await issuesState.replaceEvents(project, chunk.splice(0));
    }
    await issuesState.replaceEvents(project, chunk);

    // The sign-in attempts of the detectors' look-back, streamed the same way.
    const attempts: AttemptEntry[] = [];
    for await (const chunk of eventsStore.attemptsSince(project, new Date(now.getTime() - 2 * DETECTION_LOOKBACK_MS))) {
      for (const a of chunk) {
        if (!ATTEMPT_KINDS.has(a.security_kind)) continue;
        attempts.push({ event_id: a.event_id, at: a.at, kind: a.security_kind, actor: a.actor ?? '', group: a.group_key, ip: a.ip });
      }
      if (attempts.length >= REPLACE_CHUNK) await issuesState.replaceAttempts(project, attempts.splice(0));
    }
    await issuesState.replaceAttempts(project, attempts);

    const recounted = docs.map((doc): IssueDoc => {
      if (doc.kind !== 'error') return doc;
      const c = counted.get(doc.fingerprint);
      // Events retention deleted still count (src/store/expired.store.ts); the issue's first one may be among them.
      const gone = expired.get(doc._id)?.count ?? 0;
      // No counted event: the rest are in groups left to their jobs, which count them.
      if (!c) return { ...doc, event_count: gone };
      const first = gone > 0 && doc.first_seen < c.first.at ? doc.first_seen : c.first.at;
      const firstRelease = gone > 0 && doc.first_seen < c.first.at ? (doc.first_release ?? null) : c.first.release;
      return {
        ...doc,
        event_count: c.count + gone,
        first_seen: first,
        first_release: firstRelease,
        last_seen: c.last.at,
        last_release: c.last.release,
        latest_event: c.last._id,
      };
    });
    const expiredSpread = new Map([...expired].map(([issue, t]) => [issue, t.spread]));
    await issuesState.finishReplace(
      project,
      recounted,
      expiredSpread,
      [...applied].map(([id, at]) => ({ id, at })),
      eseq,
    );
    // feedback whose event is not counted yet waits for it, as it did before
    const issueOfEvent = (event: string | null) => (event === null ? null : (issueOf.get(fingerprintOf.get(event) ?? '') ?? null));
    await issuesState.replaceFeedback(
      project,
      feedback.map((f) => ({ issue: issueOfEvent(f.event_id), event_id: f.event_id, feedback_id: f.feedback_id, at: f.at })),
    );
    await redis.set(k.layout, ISSUE_LAYOUT);
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
      const ik = issuesState.keys(project);
      const runId = await state.runId(project);
      const current = async () => {
        const [epoch, layout, sessionLayout] = await redis.mget(k.epoch, ik.layout, k.sessionLayout);
        return epoch === runId && layout === ISSUE_LAYOUT && sessionLayout === SESSION_LAYOUT;
      };
      if (await current()) return 'verified';
      return leased(project, async () => {
        if (await current()) return 'verified';
        const held = { sessions: Number((await redis.get(k.seq)) ?? 0), issues: Number((await redis.get(k.eseq)) ?? 0) };
        const flushed = { sessions: await store.flushedSeq(project), issues: await issuesStore.flushedSeq(project) };
        await issuesState.raiseIssueSeq(await issuesStore.maxId());
        let outcome: 'verified' | 'rebuilt' = 'verified';
        const layout = await redis.get(ik.layout);
        if (layout !== ISSUE_LAYOUT && (held.issues > 0 || flushed.issues > 0) && held.issues >= flushed.issues) {
          log.warn({ project, layout }, 'the issue state of the project follows an older layout; rebuilding it');
          await redis.del(k.epoch);
          await rebuildIssues(project, now);
          outcome = 'rebuilt';
        }
        const olderSessions = (await redis.get(k.sessionLayout)) !== SESSION_LAYOUT && (held.sessions > 0 || flushed.sessions > 0);
        if (held.sessions < flushed.sessions || olderSessions) {
          const why = olderSessions ? 'the session state of the project follows an older layout' : 'Redis lost session state that MongoDB has';
          log.warn({ project, held, flushed }, `${why}; rebuilding it from the raw batches`);
          await redis.del(k.epoch);
          await rebuildSessions(project, now);
          outcome = 'rebuilt';
        }
        if (held.issues < flushed.issues) {
          log.warn({ project, held, flushed }, 'Redis lost issue state that MongoDB has; rebuilding it');
          await rebuildIssues(project, now);
          outcome = 'rebuilt';
        }
        await redis.set(ik.layout, ISSUE_LAYOUT);
        await redis.set(k.sessionLayout, SESSION_LAYOUT);
        await redis.set(k.epoch, runId);
        log.info({ project, held, flushed, outcome }, 'Redis state of the project verified against MongoDB');
        return outcome;
      });
    },
    /**
     * A call on the project's hot state, made again once the state is verified when it answers 'unverified' (a new
     * project, or Redis restarted). Another process verifying it (a worker's first job of a new project, a rebuild)
     * is waited for up to VERIFY_WAIT_MS; then 503 `state_rebuilding`.
     */
    async verified<T>(project: number, now: Date, call: () => Promise<T | 'unverified'>): Promise<T> {
      const deadline = Date.now() + VERIFY_WAIT_MS;
      for (;;) {
        const result = await call();
        if (result !== 'unverified') return result;
        if (Date.now() > deadline)
          throw new UnavailableError('state_rebuilding', 'the project state is being rebuilt after a Redis restart; retry in a moment');
        try {
          await this.verify(project, now);
        } catch (err) {
          if (!(err instanceof StateBusyError)) throw err;
          await sleep(VERIFY_POLL_MS);
        }
      }
    },
    /**
     * A job's write to the project's hot state: made, and when it answers 'unverified' (a new project, or Redis
     * restarted), made once more after the state is verified. Unverified again means the state moved under the job
     * (StateMovedError): the job is retried.
     */
    async withVerified<T extends { code: string }>(project: number, now: Date, during: string, call: () => Promise<T>): Promise<T> {
      const first = await call();
      if (first.code !== 'unverified') return first;
      await this.verify(project, now);
      const again = await call();
      if (again.code === 'unverified') throw new StateMovedError(project, during);
      return again;
    },
    /** `npx lookout admin recount`: rebuilds the project's sessions and issues whatever Redis holds. */
    rebuild: (project: number, now: Date, report?: (progress: RecountProgress) => void) =>
      leased(project, async () => {
        await redis.del(state.keys(project).epoch); // the project's scripts refuse to run until the end
        await issuesState.raiseIssueSeq(await issuesStore.maxId());
        const sessions = await rebuildSessions(project, now, report);
        const issues = await rebuildIssues(project, now);
        await redis.set(state.keys(project).epoch, await state.runId(project));
        return { ...sessions, ...issues };
      }),
  };
}
export type StateKeeper = ReturnType<typeof makeStateKeeper>;
