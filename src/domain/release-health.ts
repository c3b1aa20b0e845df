/**
 * Release rollups as pure functions: the oracle of the Redis path.
 *
 * `planMerge` applies a batch's updates to a state: sessions merged to their
 * worst status, each user's worst status per hour and per release, and the
 * hourly and release rollups moved by exactly the difference. Merging is
 * idempotent (worst status, highest error count) and aggregates are applied
 * once by id. `replayPart` adds the update window; replaying the raw
 * batches in order is the recount (src/state/rebuild.ts), and the merge
 * script must give the same state (test/session-state.test.ts).
 *
 * `recount` computes the same rollups from final session states alone; the
 * table tests hold `planMerge` to it.
 */
import {
  addCounts,
  hourOf,
  inWindow,
  mergeSession,
  total,
  worse,
  worstOf,
  zeroCounts,
  type AggregateUpdate,
  type SessionStatus,
  type SessionUpdate,
  type StatusCounts,
} from './sessions.ts';

export interface SessionDoc {
  _id: string;
  project_id: number;
  sid: string;
  release: string;
  environment: string;
  started: Date;
  hour: Date;
  status: SessionStatus;
  errors: number;
  did: string | null;
  updated_at: Date;
}

/** Sessions reported as counts; `_id` is the raw entry's id and the item's place in it. */
export interface AggregateDoc {
  _id: string;
  project_id: number;
  release: string;
  environment: string;
  started: Date;
  hour: Date;
  did: string | null;
  counts: StatusCounts;
}

/** A user's worst status in one hour (`hour` set) or over a whole release (`hour` null). */
export interface UserDoc {
  _id: string;
  project_id: number;
  release: string;
  environment: string;
  hour: Date | null;
  did: string;
  status: SessionStatus;
}

export interface HourRollup {
  _id: string;
  project_id: number;
  release: string;
  environment: string;
  hour: Date;
  sessions: StatusCounts;
  users: StatusCounts;
}

export interface ReleaseRollup {
  _id: string;
  project_id: number;
  release: string;
  environment: string;
  sessions: StatusCounts;
  users: StatusCounts;
  first_seen: Date;
  last_seen: Date;
}

/** Ids are JSON arrays so that no release or environment string can collide with another. */
export const keys = {
  session: (project: number, sid: string) => `${project}:${sid}`,
  release: (project: number, release: string, environment: string) => JSON.stringify([project, environment, release]),
  hour: (project: number, release: string, environment: string, hour: Date) => JSON.stringify([project, environment, release, hour.toISOString()]),
  user: (project: number, release: string, environment: string, hour: Date | null, did: string) =>
    JSON.stringify([project, environment, release, hour ? hour.toISOString() : '*', did]),
};

/** Where a session or aggregate counts. */
interface Bucket {
  release: string;
  environment: string;
  started: Date;
  hour: Date;
}

export interface MergeState {
  sessions: Map<string, SessionDoc>;
  users: Map<string, UserDoc>;
  hours: Map<string, HourRollup>;
  releases: Map<string, ReleaseRollup>;
  /** ids of aggregates already applied */
  aggregates: Set<string>;
}

export interface MergeWrites {
  sessions: SessionDoc[];
  users: UserDoc[];
  hours: HourRollup[];
  releases: ReleaseRollup[];
  aggregates: AggregateDoc[];
}

export function emptyWrites(): MergeWrites {
  return { sessions: [], users: [], hours: [], releases: [], aggregates: [] };
}

/** Where a new session or an aggregate counts: its release, environment and hour of `started`. */
export function newBucket(u: { release: string; environment: string; started: Date }): Bucket {
  return { release: u.release, environment: u.environment, started: u.started, hour: hourOf(u.started) };
}

/**
 * The bucket of each update: a session keeps the release, environment and
 * start of its first report (docs/decisions.md), so later updates of a stored
 * sid count where it already counts.
 */
export function sessionBucket(stored: Pick<SessionDoc, 'release' | 'environment' | 'started' | 'hour'> | undefined, update: SessionUpdate): Bucket {
  return stored ? { release: stored.release, environment: stored.environment, started: stored.started, hour: stored.hour } : newBucket(update);
}

export function planMerge(
  project: number,
  state: MergeState,
  updates: SessionUpdate[],
  aggregates: { id: string; update: AggregateUpdate }[],
  now: Date,
  /** filled in: updates and aggregates that changed nothing (resent, or older than what is stored) */
  stats: { unchanged: number } = { unchanged: 0 },
): MergeWrites {
  const changed = { sessions: new Map<string, SessionDoc>(), users: new Map<string, UserDoc>(), hours: new Map<string, HourRollup>(), releases: new Map<string, ReleaseRollup>() };

  const hourRollup = (b: Bucket): HourRollup => {
    const id = keys.hour(project, b.release, b.environment, b.hour);
    let doc = changed.hours.get(id) ?? state.hours.get(id);
    doc = doc ? { ...doc, sessions: { ...doc.sessions }, users: { ...doc.users } } : { _id: id, project_id: project, release: b.release, environment: b.environment, hour: b.hour, sessions: zeroCounts(), users: zeroCounts() };
    changed.hours.set(id, doc);
    state.hours.set(id, doc);
    return doc;
  };
  const releaseRollup = (b: Bucket): ReleaseRollup => {
    const id = keys.release(project, b.release, b.environment);
    const found = changed.releases.get(id) ?? state.releases.get(id);
    const doc: ReleaseRollup = found
      ? { ...found, sessions: { ...found.sessions }, users: { ...found.users } }
      : { _id: id, project_id: project, release: b.release, environment: b.environment, sessions: zeroCounts(), users: zeroCounts(), first_seen: b.started, last_seen: b.started };
    if (b.started < doc.first_seen) doc.first_seen = b.started;
    if (b.started > doc.last_seen) doc.last_seen = b.started;
    changed.releases.set(id, doc);
    state.releases.set(id, doc);
    return doc;
  };
  /** Moves one session (or `n` of them) from one status to another in both rollups. */
  const moveSessions = (b: Bucket, from: SessionStatus | null, to: SessionStatus, n = 1) => {
    for (const doc of [hourRollup(b), releaseRollup(b)]) {
      if (from) doc.sessions[from] -= n;
      doc.sessions[to] += n;
    }
  };
  /** A user was seen with `status` in this bucket: keep their worst, per hour and per release. */
  const seeUser = (b: Bucket, did: string | null, status: SessionStatus) => {
    if (!did) return;
    for (const hour of [b.hour, null]) {
      const id = keys.user(project, b.release, b.environment, hour, did);
      const current = changed.users.get(id) ?? state.users.get(id);
      const next = current ? worse(current.status, status) : status;
      if (current && next === current.status) continue;
      const doc: UserDoc = { _id: id, project_id: project, release: b.release, environment: b.environment, hour, did, status: next };
      changed.users.set(id, doc);
      state.users.set(id, doc);
      const rollup = hour ? hourRollup(b) : releaseRollup(b);
      if (current) rollup.users[current.status] -= 1;
      rollup.users[next] += 1;
    }
  };

  for (const update of updates) {
    const id = keys.session(project, update.sid);
    const stored = changed.sessions.get(id) ?? state.sessions.get(id);
    const bucket = sessionBucket(stored, update);
    const { status, errors } = mergeSession(stored ?? null, update);
    const did = stored?.did ?? update.did;
    if (stored && status === stored.status && errors === stored.errors && did === stored.did) {
      stats.unchanged += 1;
      continue;
    }
    const doc: SessionDoc = { _id: id, project_id: project, sid: update.sid, ...bucket, status, errors, did, updated_at: now };
    changed.sessions.set(id, doc);
    state.sessions.set(id, doc);
    if (!stored || stored.status !== status) moveSessions(bucket, stored?.status ?? null, status);
    if (did) seeUser(bucket, did, status);
  }

  const newAggregates: AggregateDoc[] = [];
  for (const { id, update } of aggregates) {
    if (state.aggregates.has(id)) {
      stats.unchanged += total(update.counts);
      continue;
    }
    state.aggregates.add(id);
    const bucket = newBucket(update);
    newAggregates.push({ _id: id, project_id: project, ...bucket, did: update.did, counts: { ...update.counts } });
    for (const [status, n] of Object.entries(update.counts) as [SessionStatus, number][]) if (n > 0) moveSessions(bucket, null, status, n);
    const worst = worstOf(update.counts);
    if (worst) seeUser(bucket, update.did, worst);
  }

  return {
    sessions: [...changed.sessions.values()],
    users: [...changed.users.values()],
    hours: [...changed.hours.values()],
    releases: [...changed.releases.values()],
    aggregates: newAggregates,
  };
}

export function emptyState(): MergeState {
  return { sessions: new Map(), users: new Map(), hours: new Map(), releases: new Map(), aggregates: new Set() };
}

/** One project's entries in a raw batch. */
export interface BatchPart {
  sessions: SessionUpdate[];
  aggregates: AggregateUpdate[];
}

/**
 * Applies one project's part of a raw batch received at `receivedAt`, with
 * the update window: entries started earlier are skipped, and a stored
 * session older than the window is forgotten (Redis expires it). This is the
 * oracle of the Redis script (src/state/scripts/merge-sessions.lua) and the
 * step of the recount (src/state/rebuild.ts).
 */
export function replayPart(
  project: number,
  state: MergeState,
  batchId: string,
  part: BatchPart,
  receivedAt: Date,
  windowMs: number,
  stats: { unchanged: number; skipped: number } = { unchanged: 0, skipped: 0 },
): MergeWrites {
  const sessions = part.sessions.filter((u) => inWindow(u.started, receivedAt, windowMs));
  const aggregates = part.aggregates.filter((a) => inWindow(a.started, receivedAt, windowMs));
  stats.skipped += part.sessions.length - sessions.length + part.aggregates.filter((a) => !aggregates.includes(a)).reduce((n, a) => n + total(a.counts), 0);
  for (const u of sessions) {
    const id = keys.session(project, u.sid);
    const stored = state.sessions.get(id);
    if (stored && !inWindow(stored.started, receivedAt, windowMs)) state.sessions.delete(id);
  }
  return planMerge(project, state, sessions, aggregates.map((update, i) => ({ id: `${batchId}:${i}`, update })), receivedAt, stats);
}

export interface Recount {
  hours: Map<string, { sessions: StatusCounts; users: StatusCounts }>;
  releases: Map<string, { sessions: StatusCounts; users: StatusCounts }>;
}

/** Rollups computed from scratch from stored sessions and aggregates. */
export function recount(
  project: number,
  sessions: Iterable<Pick<SessionDoc, 'release' | 'environment' | 'hour' | 'status' | 'did'>>,
  aggregates: Iterable<Pick<AggregateDoc, 'release' | 'environment' | 'hour' | 'did' | 'counts'>>,
): Recount {
  const out: Recount = { hours: new Map(), releases: new Map() };
  const hourUsers = new Map<string, SessionStatus>();
  const releaseUsers = new Map<string, SessionStatus>();
  const entry = (map: Recount['hours'], id: string) => {
    let e = map.get(id);
    if (!e) map.set(id, (e = { sessions: zeroCounts(), users: zeroCounts() }));
    return e;
  };
  const add = (s: { release: string; environment: string; hour: Date; did: string | null }, counts: StatusCounts) => {
    addCounts(entry(out.hours, keys.hour(project, s.release, s.environment, s.hour)).sessions, counts);
    addCounts(entry(out.releases, keys.release(project, s.release, s.environment)).sessions, counts);
    const worst = worstOf(counts);
    if (!s.did || !worst) return;
    for (const [users, id] of [
      [hourUsers, keys.user(project, s.release, s.environment, s.hour, s.did)],
      [releaseUsers, keys.user(project, s.release, s.environment, null, s.did)],
    ] as const) {
      const seen = users.get(id);
      users.set(id, seen ? worse(seen, worst) : worst);
    }
  };
  for (const s of sessions) add(s, { ...zeroCounts(), [s.status]: 1 });
  for (const a of aggregates) add(a, a.counts);
  for (const [users, map, scope] of [
    [hourUsers, out.hours, 'hour'],
    [releaseUsers, out.releases, 'release'],
  ] as const) {
    for (const [id, status] of users) {
      const [p, env, rel, hour] = JSON.parse(id) as [number, string, string, string];
      const rollupId = scope === 'hour' ? keys.hour(p, rel, env, new Date(hour)) : keys.release(p, rel, env);
      entry(map, rollupId).users[status] += 1;
    }
  }
  return out;
}

/** Sessions per status plus their total, as the read API shows them. */
export function withTotal(counts: StatusCounts): StatusCounts & { total: number } {
  return { total: total(counts), ...counts };
}
