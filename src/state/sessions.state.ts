/**
 * The hot state of release health in Redis: each session's worst status,
 * each user's worst status per hour and per release, and the rollups. It
 * changes only through the scripts in ./scripts (loaded once, called through
 * the typed functions here), one call per project per batch.
 *
 * Every key of a project starts with `<prefix>:{p:<id>}:`: the hash tag puts
 * them in one Redis Cluster slot, so each script touches one slot
 * (docs/scaling.md). Two keys are global and touched only by plain commands:
 * the projects with rollups to flush, and the batches applied but not flushed.
 */
import type { RedisClient } from '../redis/connect.ts';
import { bucketKey, readBucketKey, readRollupKey } from '../domain/client-keys.ts';
import { keys, type BatchPart, type HourRollup, type ReleaseRollup } from '../domain/release-health.ts';
import type { Flushed } from '../store/sessions.store.ts';
import { hourOf, STATUSES, type SessionStatus, type StatusCounts } from '../domain/sessions.ts';
import { takeLease, type Lease } from './lease.ts';
import { makePendingFlush } from './pending-flush.ts';
import { makeRepackList } from './repack-list.ts';
import { answerOf, APPLY_CODES, defineScripts, dropProjectKeys, projectKeys, scanProject, type ApplyCode, type ScriptCommands } from './scripts.ts';

/**
 * The layout of a project's session state: '3' is the session table with packed values, placed by the ids'
 * own bytes (scripts/lib/session-table.lua; '2' held values as text, placed by SHA-1). A project whose keys
 * follow another is rebuilt from its raw batches once, at its next verification.
 */
export const SESSION_LAYOUT = '3';

/** How long an applied batch id is remembered: far longer than any redelivery of its job. */
export const APPLIED_MEMORY_MS = 24 * 3600 * 1000;

const rank = (status: SessionStatus) => STATUSES.indexOf(status);
/** How long hourly state (users and rollups of an hour) lives past its hour, as merge-sessions-4.lua keeps it. */
const hourlyTtlMs = (windowMs: number) => windowMs + 3600_000 + 86_400_000;

/** A session's state as the script keeps it (tests and the recount read it). */
export interface StoredSession {
  status: SessionStatus;
  errors: number;
  hour: Date;
  started: Date;
  did: string | null;
  environment: string;
  release: string;
}

/** One changed rollup read by the flusher. */
export interface RollupSnapshot {
  kind: 'hour' | 'release';
  key: string;
  version: string;
  environment: string;
  release: string;
  hour: Date | null;
  sessions: StatusCounts;
  users: StatusCounts;
  first_seen: Date | null;
  last_seen: Date | null;
}

export function makeSessionState(redis: RedisClient, opts: { prefix: string; windowMs: number }) {
  const r = defineScripts(redis);

  return {
    redis,
    pending: makePendingFlush(redis, opts.prefix, 'sessions'),
    /** Raw batches a part holds whose own documents are not yet deleted (src/services/session-parts.ts), across projects. */
    partedList: makeRepackList(redis, `${opts.prefix}:sessions:parted`),
    /** The session repacker's lease, for up to `ms` (null: another run holds it). */
    takeRepackLease: (ms: number): Promise<Lease | null> => takeLease(redis, `${opts.prefix}:sessions:repack:lease`, ms),
    keys: (project: number) => projectKeys(opts.prefix, project),
    windowMs: opts.windowMs,

    /** Applies one project's part of a batch (`mergePart`); `unverified` asks for `verify` first (src/state/rebuild.ts). */
    async apply(project: number, batchId: string, receivedAt: Date, part: BatchPart) {
      return mergePart(r, projectKeys(opts.prefix, project), { batchId, receivedAt, windowMs: opts.windowMs, keepHours: false }, part);
    },
    /** Applies chunk `index` of `count` of a part (`apply` runs them all). */
    applyChunk(project: number, batchId: string, receivedAt: Date, chunk: BatchPart, index: number, count: number) {
      return mergeChunk(r, projectKeys(opts.prefix, project), { batchId, receivedAt, windowMs: opts.windowMs, keepHours: false }, chunk, index, count);
    },

    /** The changed rollups of a project and its change counter, read atomically. */
    async snapshot(project: number): Promise<{ verified: boolean; seq: number; rollups: RollupSnapshot[] }> {
      const k = projectKeys(opts.prefix, project);
      const [verified, seq, ...rows] = await r.snapshotRollups(k.epoch, k.seq, k.dirty, k.base);
      const rollups = rows.filter(([, , fields]) => fields.length > 0).map(([key, version, fields]) => readRollup(key, version, fields));
      return { verified: verified === 1, seq, rollups };
    },
    async clear(project: number, written: { key: string; version: string }[]): Promise<void> {
      if (written.length > 0) await r.clearDirty(projectKeys(opts.prefix, project).dirty, ...written.flatMap((w) => [w.key, w.version]));
    },

    /** The recount's scratch state of the project (below). */
    recount: (project: number) => recountScratch(redis, r, projectKeys(opts.prefix, project), opts.windowMs),

    /** A session's stored state, or null (unknown, or past the update window). */
    async session(project: number, sid: string, now = new Date()): Promise<StoredSession | null> {
      const k = projectKeys(opts.prefix, project);
      const found = await r.readSession(k.sessionTable, k.base, sid, now.getTime(), opts.windowMs);
      if (!found) return null;
      const [rankOf, errors, started, did, bucket] = found;
      const { environment, release } = readBucketKey(bucket);
      const at = new Date(Number(started));
      return { status: STATUSES[rankOf]!, errors, hour: hourOf(at), started: at, did: did || null, environment, release };
    },

    /** The run id of the Redis server holding the project's state: a restart, a new server or a promoted replica changes it. */
    runId: (project: number): Promise<string> => r.runId(projectKeys(opts.prefix, project).epoch),
  };
}
export type SessionState = ReturnType<typeof makeSessionState>;

/** How far a recount got: the last raw batch it replayed, in the order it reads them (src/store/sessions.store.ts). */
export interface RecountProgress {
  /** the sort key of the document it was read from */
  at: number;
  id: string;
  /** its place in that document (0 but in a repacked part; absent in a recount begun before parts) */
  index?: number;
  batches: number;
  entries: number;
  /** batches replayed by an earlier run that stopped (0: this run began afresh) */
  resumed: number;
  /** when the recount began; 'adopt': its state was being moved in place, and it cannot be resumed */
  started: number;
  phase: 'replay' | 'adopt';
}

/**
 * A recount's scratch state (src/state/rebuild.ts): the project's raw batches
 * replayed, oldest first, through the merge script into the same table and
 * rollups under `<base>rc:`, in the project's slot, then moved in place of the
 * project's state. Node holds one batch at a time, whatever the volume; Redis
 * holds what the live state holds (hour rollups of every hour, kept without
 * expiry until they are copied to MongoDB). `progress` is written after each
 * batch, so a recount killed halfway resumes where it stopped: the batch it
 * was replaying is applied once (the script records its id).
 */
function recountScratch(redis: RedisClient, r: RedisClient & ScriptCommands, k: ReturnType<typeof projectKeys>, windowMs: number) {
  const rc = `${k.base}rc:`;
  const scratch = { epoch: `${rc}epoch`, seq: `${rc}seq`, applied: `${rc}applied`, dirty: `${rc}dirty`, layout: `${rc}slayout`, progress: `${rc}progress` };
  return {
    async progress(): Promise<RecountProgress | null> {
      const text = await redis.get(scratch.progress);
      return text ? (JSON.parse(text) as RecountProgress) : null;
    },
    async begin(now: Date): Promise<RecountProgress> {
      await dropProjectKeys(redis, rc, ['*'], []);
      const progress: RecountProgress = { at: 0, id: '', batches: 0, entries: 0, resumed: 0, started: now.getTime(), phase: 'replay' };
      await redis.mset(scratch.epoch, await r.runId(scratch.epoch), scratch.layout, SESSION_LAYOUT, scratch.progress, JSON.stringify(progress));
      return progress;
    },
    async replay(batchId: string, receivedAt: Date, part: BatchPart): Promise<number> {
      const keys = { ...scratch, base: rc };
      const { code, changed } = await mergePart(r, keys, { batchId, receivedAt, windowMs, keepHours: true }, part);
      if (code === 'unverified') throw new Error('Redis restarted during the recount; run it again');
      return changed;
    },
    mark: (progress: RecountProgress) => redis.set(scratch.progress, JSON.stringify(progress)),
    /** The recounted rollups, a few hundred at a time. */
    async *rollups(): AsyncGenerator<RollupSnapshot[]> {
      for (const pattern of ['rh:*', 'rr:*']) {
        for await (const found of scanProject(redis, rc, pattern)) {
          const pipe = redis.pipeline();
          for (const key of found) pipe.hgetall(key);
          const hashes = ((await pipe.exec()) ?? []).map(([, h]) => h as Record<string, string>);
          yield found.map((key, i) => readRollup(key.slice(rc.length), '', Object.entries(hashes[i]!).flat()));
        }
      }
    },
    /**
     * Moves the scratch state in place of the project's (its epoch deleted, so no script runs meanwhile): the
     * table and release rollups as they are, hour rollups of hours still live with their expiry, then the
     * applied batch ids and the change counter.
     */
    async adopt(progress: RecountProgress, at: { seq: number; applied: [number, string][]; now: Date }): Promise<void> {
      await this.mark({ ...progress, phase: 'adopt' });
      // (s:*, uh:* and ur:* held sessions and users before the session table: layout 1)
      await dropProjectKeys(
        redis,
        k.base,
        ['s:*', 'ss:*', 'rh:*', 'rr:*', 'uh:*', 'ur:*'],
        [k.seq, k.applied, k.dirty, k.sessionTable, `${k.base}bk`, `${k.base}bi`],
      );
      const ttl = hourlyTtlMs(windowMs);
      for await (const found of scanProject(redis, rc, '*')) {
        const pipe = redis.pipeline();
        for (const key of found) {
          const suffix = key.slice(rc.length);
          const hour = /^rh:(\d+):/.exec(suffix);
          const expires = hour ? Number(hour[1]) + ttl : null; // an hour rollup's, as the merge script sets it
          if (expires !== null && expires <= at.now.getTime()) pipe.unlink(key);
          else if (/^(ss:|rh:|rr:)|^(sm|bk|bi)$/.test(suffix)) pipe.rename(key, `${k.base}${suffix}`);
          if (expires !== null && expires > at.now.getTime()) pipe.pexpireat(`${k.base}${suffix}`, expires);
        }
        await pipe.exec();
      }
      const pipe = redis.pipeline();
      for (let i = 0; i < at.applied.length; i += 1000) pipe.zadd(k.applied, ...at.applied.slice(i, i + 1000).flat());
      pipe.set(k.seq, String(at.seq));
      pipe.set(k.sessionLayout, SESSION_LAYOUT);
      await pipe.exec();
      await dropProjectKeys(redis, rc, ['*'], []);
    },
  };
}

/**
 * Most entries one merge script call applies. A script holds Redis while it runs, some 0.1 ms an entry on a busy
 * host: a part of 800 sessions in one call held every other client 90 ms (bench:growth, docs/performance.md).
 */
export const MERGE_CHUNK_ENTRIES = 50;

/** A part in chunks of at most MERGE_CHUNK_ENTRIES entries, sessions first: the same part always gives the same chunks. */
export function chunksOf(part: BatchPart): BatchPart[] {
  const chunks: BatchPart[] = [];
  for (let i = 0; i < part.sessions.length; i += MERGE_CHUNK_ENTRIES)
    chunks.push({ sessions: part.sessions.slice(i, i + MERGE_CHUNK_ENTRIES), aggregates: [] });
  for (let i = 0; i < part.aggregates.length; i += MERGE_CHUNK_ENTRIES)
    chunks.push({ sessions: [], aggregates: part.aggregates.slice(i, i + MERGE_CHUNK_ENTRIES) });
  return chunks.length > 0 ? chunks : [part];
}

/** The keys merge-sessions-4.lua changes: a project's, or a recount's scratch state. */
interface MergeKeys {
  epoch: string;
  seq: string;
  applied: string;
  dirty: string;
  base: string;
}

/** What a merge call is told of its batch; `keepHours`: hour rollups without expiry (a recount's scratch state). */
interface MergeOf {
  batchId: string;
  receivedAt: Date;
  windowMs: number;
  keepHours: boolean;
}

/** One chunk through the merge script. */
async function mergeChunk(r: ScriptCommands, k: MergeKeys, of: MergeOf, chunk: BatchPart, index: number, count: number) {
  const args = [k.base, of.batchId, of.receivedAt.getTime(), of.windowMs, APPLIED_MEMORY_MS, encodeEntries(chunk), of.keepHours ? '1' : '', index, count];
  const [code, changed, unchanged, skipped] = await r.mergeSessions(k.epoch, k.seq, k.applied, k.dirty, ...args);
  return { code: answerOf(code, APPLY_CODES), changed, unchanged, skipped };
}

/**
 * A part through the merge script, chunk by chunk; `unverified` stops at the chunk that met it (a second call
 * skips the chunks applied before). `unchanged` counts the sessions of chunks applied before too.
 */
async function mergePart(r: ScriptCommands, k: MergeKeys, of: MergeOf, part: BatchPart) {
  const result = { code: 'already_applied' as ApplyCode, changed: 0, unchanged: 0, skipped: 0 };
  const chunks = chunksOf(part);
  for (const [i, chunk] of chunks.entries()) {
    const { code, changed, unchanged, skipped } = await mergeChunk(r, k, of, chunk, i, chunks.length);
    if (code === 'unverified') return { ...result, code };
    if (code === 'already_applied') {
      result.unchanged += chunk.sessions.length;
      continue;
    }
    result.code = 'applied';
    result.changed += changed;
    result.unchanged += unchanged;
    result.skipped += skipped;
  }
  return result;
}

/** One project's entries as merge-sessions-4.lua reads them. */
function encodeEntries(part: BatchPart): string {
  return JSON.stringify({
    s: part.sessions.map((u) => ({
      sid: u.sid,
      rank: rank(u.status),
      errors: u.errors,
      did: u.did ?? '',
      started: u.started.getTime(),
      hour: hourOf(u.started).getTime(),
      bucket: bucketKey(u.environment, u.release),
    })),
    a: part.aggregates.map((a) => ({
      bucket: bucketKey(a.environment, a.release),
      started: a.started.getTime(),
      hour: hourOf(a.started).getTime(),
      did: a.did ?? '',
      counts: [a.counts.ok, a.counts.errored, a.counts.abnormal, a.counts.crashed],
    })),
  });
}

/** The rollups as the flusher and the recount write them to MongoDB, at change counter `v`. */
export function rollupDocs(project: number, rollups: RollupSnapshot[], v: number): { hours: Flushed<HourRollup>[]; releases: Flushed<ReleaseRollup>[] } {
  const out = { hours: [] as Flushed<HourRollup>[], releases: [] as Flushed<ReleaseRollup>[] };
  for (const r of rollups) {
    if (r.kind === 'hour') {
      out.hours.push({
        _id: keys.hour(project, r.release, r.environment, r.hour!),
        project_id: project,
        release: r.release,
        environment: r.environment,
        hour: r.hour!,
        sessions: r.sessions,
        users: r.users,
        v,
      });
    } else {
      out.releases.push({
        _id: keys.release(project, r.release, r.environment),
        project_id: project,
        release: r.release,
        environment: r.environment,
        sessions: r.sessions,
        users: r.users,
        first_seen: r.first_seen!,
        last_seen: r.last_seen!,
        v,
      });
    }
  }
  return out;
}

/** A rollup key (src/domain/client-keys.ts' rollupKey, as merge-sessions-4.lua builds it) and its hash → the rollup. */
function readRollup(key: string, version: string, fields: string[]): RollupSnapshot {
  const hash: Record<string, string> = {};
  for (let i = 0; i < fields.length; i += 2) hash[fields[i]!] = fields[i + 1]!;
  const counts = (prefix: 's' | 'u') => Object.fromEntries(STATUSES.map((s, i) => [s, Number(hash[`${prefix}${i}`] ?? 0)])) as StatusCounts;
  const { hour, environment, release } = readRollupKey(key);
  const at = (field: string) => (hash[field] ? new Date(Number(hash[field])) : null);
  return {
    kind: hour === null ? 'release' : 'hour',
    key,
    version,
    environment,
    release,
    hour: hour === null ? null : new Date(hour),
    sessions: counts('s'),
    users: counts('u'),
    first_seen: at('f'),
    last_seen: at('l'),
  };
}
