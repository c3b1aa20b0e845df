/**
 * Sessions in MongoDB: written in bulk, read rarely.
 *
 * - `session_raw`: every raw batch as received (one document per group of
 *   requests the API wrote at once), kept 90 days. They are the stored
 *   sessions and the input of any recount; no API reads one session. A
 *   batch's requests are stored as one deflated JSON value (`packed`) beside
 *   the projects they hold: about a fifth of their bytes on disk
 *   (docs/decisions.md). Batches stored before hold `requests` as they came.
 *   The worker then copies the batches it applied into parts of some 60 KB,
 *   and their documents are deleted (src/services/session-parts.ts): one
 *   4 KB batch fills most of an 8 KB SQLite page, a part its pages whole.
 * - `session_backlog` (src/store/backlog.ts): a marker per raw batch whose
 *   effects are not yet durable in MongoDB, written before the raw batch and
 *   deleted by the flusher once the rollups the batch changed are written.
 * - `release_hours`, `releases`: the rollups the read API serves, copied from
 *   Redis by the flusher. Each carries `v`, the project's change counter when
 *   it was read, and a write never replaces a newer one (two flushers, or a
 *   slow one, cannot put an older value back).
 * - `session_flush`: per project, the change counter the last flush covered;
 *   a Redis that comes back behind it lost state and is rebuilt.
 */
import crypto from 'node:crypto';
import { Binary, type Db } from 'mongodb';
import type { HourRollup, ReleaseRollup } from '../domain/release-health.ts';
import type { AggregateUpdate, SessionStatus, SessionUpdate } from '../domain/sessions.ts';
import { makeBacklog } from './backlog.ts';
import { makePace, type Pace } from './attempts.store.ts';
import { ensureIndexes, insertOnce, type StoreProfile } from './mongo.ts';
import { packJson, unpackJson } from './packing.ts';
import { makeFlushMarks, writeNewer } from './versioned.ts';

export const RETENTION_DAYS = 90;
const RETENTION_MS = RETENTION_DAYS * 24 * 3600 * 1000;

/**
 * One request's entries as stored: `entries` is the JSON of its session
 * updates, column by column (`SessionColumns`), and its aggregates. Nothing
 * queries inside them, and FerretDB v1 writes one string about 3.5 times
 * faster than the same entries as documents (it keeps a type schema for every
 * field): docs/decisions.md.
 */
export interface RawRequest {
  project_id: number;
  entries: string;
}

/**
 * A request's sessions as columns: each field's values side by side
 * compress to about two thirds of the same sessions as objects (sids and
 * user hashes are most of what is left), and `started` is kept as
 * milliseconds after the first. Requests stored before hold `sessions` as
 * objects.
 */
interface SessionColumns {
  sid: string[];
  /** the distinct releases and environments, and each session's index among them */
  releases: string[];
  release: number[];
  environments: string[];
  environment: number[];
  /** one letter per session: o(k), e(rrored), a(bnormal), c(rashed) */
  status: string;
  errors: number[];
  /** user hashes */
  did: (string | null)[];
  /** epoch milliseconds of the first session's start, then each session's start after it */
  t0: number;
  started: number[];
}

const STATUS_LETTERS: Record<SessionStatus, string> = { ok: 'o', errored: 'e', abnormal: 'a', crashed: 'c' };
const STATUS_OF_LETTER = new Map(Object.entries(STATUS_LETTERS).map(([status, letter]) => [letter, status as SessionStatus]));

function toColumns(sessions: SessionUpdate[]): SessionColumns {
  const indexer = () => {
    const values: string[] = [];
    const at = new Map<string, number>();
    return { values, of: (v: string) => at.get(v) ?? (at.set(v, values.length), values.push(v), values.length - 1) };
  };
  const releases = indexer();
  const environments = indexer();
  const t0 = sessions[0]?.started.getTime() ?? 0;
  return {
    sid: sessions.map((s) => s.sid),
    releases: releases.values,
    release: sessions.map((s) => releases.of(s.release)),
    environments: environments.values,
    environment: sessions.map((s) => environments.of(s.environment)),
    status: sessions.map((s) => STATUS_LETTERS[s.status]).join(''),
    errors: sessions.map((s) => s.errors),
    did: sessions.map((s) => s.did),
    t0,
    started: sessions.map((s) => s.started.getTime() - t0),
  };
}

function fromColumns(c: SessionColumns): SessionUpdate[] {
  return c.sid.map((sid, i) => ({
    sid,
    release: c.releases[c.release[i]!]!,
    environment: c.environments[c.environment[i]!]!,
    status: STATUS_OF_LETTER.get(c.status[i]!)!,
    errors: c.errors[i]!,
    did: c.did[i] ?? null,
    started: new Date(c.t0 + c.started[i]!),
  }));
}

export function packRequest(project: number, sessions: SessionUpdate[], aggregates: AggregateUpdate[]): RawRequest {
  return { project_id: project, entries: JSON.stringify({ columns: toColumns(sessions), aggregates }) };
}

/** A stored request's entries, with their dates read back. */
export function unpackRequest(request: RawRequest): { sessions: SessionUpdate[]; aggregates: AggregateUpdate[] } {
  const stored = JSON.parse(request.entries) as { columns?: SessionColumns; sessions?: SessionUpdate[]; aggregates: AggregateUpdate[] };
  return {
    sessions: stored.columns ? fromColumns(stored.columns) : stored.sessions!.map((s) => ({ ...s, started: new Date(s.started) })),
    aggregates: stored.aggregates.map((a) => ({ ...a, started: new Date(a.started) })),
  };
}

export interface SessionBatchDoc {
  _id: string;
  received_at: Date;
  requests: RawRequest[];
}

/**
 * A raw batch as stored: its requests deflated in one value, and the projects they hold (for the recount's query).
 * A part (`merged` set) holds batches a worker applied instead, some PART_JSON_CHARS of them
 * (src/services/session-parts.ts); parts written before hold a minute's batches, or part of them (`m:<minute>:<n>`).
 */
interface StoredBatch {
  _id: string;
  /** a part's: its last batch's */
  received_at: Date;
  projects: number[];
  packed: Binary;
  /** a part's batch ids, in the order it holds them (by id) */
  merged?: string[];
}

/** What a part packs. */
interface PartContents {
  batches: { _id: string; received_at: number; requests: RawRequest[] }[];
}

/** Where a batch was read from: the stored document's sort key, and the batch's place in it (0 but in a part). */
export interface StoredAt {
  at: number;
  id: string;
  index: number;
}

/**
 * Most entries JSON in a part, give or take a batch: some 1,900 sessions, about 60 KB deflated. Inserting it holds
 * the embedded FerretDB's one writer, which ingestion's inserts wait for: parts of 250 KB held it 12 ms at the median
 * under `bench:growth`'s load (29 ms at p90), these 3.6 ms (docs/decisions.md).
 */
export const PART_JSON_CHARS = 125_000;
/** Most batch documents deleted in one call: 25 hold FerretDB's one writer about 4 ms (100 held it 14 ms). */
const DELETES_PER_CALL = 25;

function packBatch(doc: SessionBatchDoc): StoredBatch {
  const projects = [...new Set(doc.requests.map((r) => r.project_id))];
  return { _id: doc._id, received_at: doc.received_at, projects, packed: packJson(doc.requests, 'fast') };
}

/**
 * A batch as the API's job carries it: its requests as they are stored, deflated, in base64. Carried as JSON
 * (the entries' own JSON quoted inside it), a 100-session batch was about 18 KB, and the sessions' jobs a tenth
 * of what Redis wrote to its append-only file; deflated, about 4 KB (docs/performance.md).
 */
export interface JobBatch {
  id: string;
  received_at: string;
  packed: string;
}

export function batchOfJob(job: JobBatch): SessionBatchDoc {
  return { _id: job.id, received_at: new Date(job.received_at), requests: unpackJson<RawRequest[]>(Binary.createFromBase64(job.packed)) };
}

/** The batches a stored document holds: itself, or a part's. */
function unpackStored(stored: StoredBatch): SessionBatchDoc[] {
  if (stored.merged) {
    const { batches } = unpackJson<PartContents>(stored.packed);
    return batches.map((b) => ({ _id: b._id, received_at: new Date(b.received_at), requests: b.requests }));
  }
  return [{ _id: stored._id, received_at: stored.received_at, requests: unpackJson<RawRequest[]>(stored.packed) }];
}

/** A rollup as the flusher writes it: `v` is the project's change counter it was read at. */
export type Flushed<T> = T & { v: number };

export function makeSessionsStore(db: Db, profile: StoreProfile) {
  const raw = db.collection<StoredBatch>('session_raw');
  const backlog = makeBacklog(db, 'session_backlog');
  const hours = db.collection<Flushed<HourRollup>>('release_hours');
  const releases = db.collection<Flushed<ReleaseRollup>>('releases');

  const marks = makeFlushMarks(db, 'session_flush');

  return {
    raw,
    backlog,
    hours,
    releases,
    async ensureIndexes() {
      await backlog.ensureIndexes();
      // a store that answers no query from an index gets none on the raw batches: they would only slow every insert
      if (profile.secondaryIndexes) await ensureIndexes(raw, [{ key: { projects: 1, received_at: 1 }, name: 'projects_received' }]);
      // expiry by TTL where the store has it; the retention job deletes old batches on every store
      if (profile.ttl) await ensureIndexes(raw, [{ key: { received_at: 1 }, name: 'retention', expireAfterSeconds: RETENTION_MS / 1000 }]);
      await ensureIndexes(hours, [{ key: { project_id: 1, environment: 1, release: 1, hour: 1 }, name: 'release_hour' }, { key: { project_id: 1, environment: 1, hour: 1 }, name: 'env_hour' }]);
      await ensureIndexes(releases, [{ key: { project_id: 1, last_seen: -1 }, name: 'project_last_seen' }]);
    },

    /**
     * One raw batch of the requests, durably: its backlog marker first, then
     * the entries. A marker whose batch never got written (a crash between
     * the two) is dropped by the worker that finds no batch; the caller was
     * not answered.
     */
    async insertBatch(requests: RawRequest[]): Promise<JobBatch> {
      const { _id } = await backlog.take();
      const doc: SessionBatchDoc = { _id, received_at: new Date(), requests };
      const stored = packBatch(doc);
      await raw.insertOne(stored);
      return { id: _id, received_at: doc.received_at.toISOString(), packed: stored.packed!.toString('base64') };
    },
    /** A raw batch by id (the sweeper's jobs carry only the id; a batch still on the backlog keeps its document). */
    async getBatch(id: string): Promise<SessionBatchDoc | null> {
      const stored = await raw.findOne({ _id: id });
      return stored && unpackStored(stored)[0]!;
    },
    /**
     * Every retained raw batch with entries of the project, in the order of the documents that hold them (oldest
     * first, a part's batches in their order), each with where it was read from (recount only).
     */
    async *batchesOf(project: number): AsyncGenerator<{ batch: SessionBatchDoc; from: StoredAt }> {
      const cursor = raw.find({ projects: project }).sort({ received_at: 1, _id: 1 });
      for await (const stored of cursor) {
        const batches = unpackStored(stored);
        for (const [index, batch] of batches.entries()) {
          if (!batch.requests.some((r) => r.project_id === project)) continue;
          yield { batch, from: { at: stored.received_at.getTime(), id: stored._id, index } };
        }
      }
    },
    /** Raw batches as stored, written straight (tests and benchmarks that make a history). */
    insertRaw: (docs: SessionBatchDoc[]) => raw.insertMany(docs.map(packBatch)),
    /** How many raw documents (batches, or parts) hold entries of the project. */
    countOf: (project: number) => raw.countDocuments({ projects: project }),
    async writeRollups(docs: { hours: Flushed<HourRollup>[]; releases: Flushed<ReleaseRollup>[] }): Promise<void> {
      await Promise.all([writeNewer(hours, docs.hours), writeNewer(releases, docs.releases)]);
    },
    /** The session change counter of the project's last flush (0: never), written before its rollups. */
    flushedSeq: marks.get,
    setFlushedSeq: marks.raise,

    /** Deletes raw batches past retention; rollups stay. */
    async deleteExpired(now: Date): Promise<Record<string, number>> {
      const cutoff = new Date(now.getTime() - RETENTION_MS);
      const deleted = await raw.deleteMany({ received_at: { $lt: cutoff } });
      return { session_raw: deleted.deletedCount };
    },

    /**
     * Writes batches the worker applied, as it holds them, into one part (`packed` deflates them together), and
     * returns its id. The part is a copy: each batch keeps its document until `deleteBatches`, and a recount reads a
     * batch that is in both, or in two parts, once (its id is recorded). The id names the batches it holds, so a
     * part written twice (a duplicate delivery) is inserted once, and two parts that hold different batches differ.
     */
    async insertPart(batches: SessionBatchDoc[]): Promise<string> {
      const sorted = [...batches].sort((a, b) => (a._id < b._id ? -1 : 1));
      const ids = sorted.map((b) => b._id);
      const _id = `p:${ids[0]}:${crypto.createHash('sha256').update(ids.join(',')).digest('hex').slice(0, 16)}`;
      const contents: PartContents = { batches: sorted.map((b) => ({ _id: b._id, received_at: b.received_at.getTime(), requests: b.requests })) };
      await insertOnce(raw, {
        _id,
        received_at: new Date(Math.max(...sorted.map((b) => b.received_at.getTime()))),
        projects: [...new Set(sorted.flatMap((b) => b.requests.map((r) => r.project_id)))],
        merged: ids,
        packed: packJson(contents, 'small'),
      });
      return _id;
    },
    /** Deletes the documents of batches a part holds, DELETES_PER_CALL at a time; returns how many it deleted. */
    async deleteBatches(ids: string[], paced: Pace = makePace()): Promise<number> {
      let deleted = 0;
      for (let i = 0; i < ids.length; i += DELETES_PER_CALL) {
        const chunk = ids.slice(i, i + DELETES_PER_CALL);
        deleted += (await paced(chunk.length, () => raw.deleteMany({ _id: { $in: chunk } }))).deletedCount;
      }
      return deleted;
    },
  };
}
export type SessionsStore = ReturnType<typeof makeSessionsStore>;
