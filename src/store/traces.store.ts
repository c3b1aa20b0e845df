/**
 * Traces and logs (issue 69). Every `_id` begins with its project, and the time-ordered ones with their time, so
 * every read and every retention delete is one `_id` range (FerretDB v1 serves nothing else from an index).
 *
 * - `trace_raw`: what the API received together, one document per group (`_id` the group's id), the records packed
 *   as deflated JSON; written after its backlog marker (`trace_backlog`), so a 2xx means stored and a lost job is
 *   swept; deleted once its job has applied it.
 * - `perf_parts`: one job's counts of a project's minute (`<project>:<minute>:<group>`), written once by the job
 *   (a retried job writes the same `_id`: refused, not counted twice) and merged into `perf_minutes` by the rollup.
 * - `perf_minutes`, `perf_hours`, `perf_days`: a project's bucket of each (`<project>:<start>`, src/domain/
 *   perf-buckets.ts); a minute lists the parts merged into it last (`merged`), so a merge cut off between its
 *   write and its delete is not counted again.
 * - `perf_names`: the parts of each transaction group (`<project>:g:<key>`) and span group (`<project>:s:<key>`).
 * - `perf_rollup`: how far hours and days are summed (`hour`, `day`), and the hours to sum again
 *   (`resum:<project>:<hour>`).
 * - `trace_samples`: transactions kept whole for the waterfall (`<project>:<trace>:<span>`).
 * - `log_chunks`: a job's log lines of one project and minute (`<project>:<minute>:<group>`), packed, with the
 *   trace ids they name (their first 8 hex digits) for the trace page.
 * - `trace_errors`: a job's error events that named a trace, per project and minute (`<project>:<minute>:<group>`).
 */
import { type Binary, type Db } from 'mongodb';
import { LRUCache } from 'lru-cache';
import { DAY_MS, HOUR_MS, MINUTE_MS, type Bucket, type GroupParts, type SpanParts } from '../domain/perf-buckets.ts';
import type { LogRecord } from '../domain/logs.ts';
import type { TransactionRecord } from '../domain/transactions.ts';
import { makeBacklog } from './backlog.ts';
import { isDuplicateKey, sortableMs } from './mongo.ts';
import { packJson, unpackJson } from './packing.ts';

/** One thing the API received: a transaction, vitals of a page, or log lines, with its project. */
export type Received =
  | { project: number; kind: 'transaction'; tx: TransactionRecord }
  | { project: number; kind: 'vitals'; page: Pick<TransactionRecord, 'environment' | 'release' | 'name' | 'op' | 'method'>; at: number; vitals: TransactionRecord['vitals'] }
  | { project: number; kind: 'logs'; lines: LogRecord[]; environment: string | null; release: string | null };

export interface TraceGroupDoc {
  _id: string;
  received_at: Date;
  data: Binary;
}

/** A group as its job carries it (the sweeper's carry only the id). */
export interface JobTraces {
  id: string;
  received_at: string;
  items?: Received[];
}

export interface BucketDoc {
  _id: string;
  b: Bucket;
  /** (minutes) the parts merged by the last write */
  merged?: string[];
}

/**
 * A bucket as stored: its counts and its span groups each packed (deflated JSON), apart, so the lists, which never
 * show span groups, read a fraction of the bytes. FerretDB v1 writes and reads one binary value several times faster
 * than the same fields as a document (it keeps a type schema for every field), and a minute's bucket holds hundreds.
 */
interface StoredBucket {
  _id: string;
  /** the counts: group key → GroupCounts without `sp` */
  c: Binary;
  /** the span groups: group key → its span groups */
  s?: Binary;
  merged?: string[];
}

function toStored(doc: BucketDoc): StoredBucket {
  const counts: Bucket = {};
  const spans: Record<string, NonNullable<Bucket[string]['sp']>> = {};
  for (const [key, { sp, ...rest }] of Object.entries(doc.b)) {
    counts[key] = rest;
    if (sp) spans[key] = sp;
  }
  return { _id: doc._id, c: packJson(counts, 'small'), ...(Object.keys(spans).length > 0 && { s: packJson(spans, 'small') }), ...(doc.merged && { merged: doc.merged }) };
}

function fromStored(doc: StoredBucket): BucketDoc {
  const b = unpackJson<Bucket>(doc.c);
  if (doc.s) for (const [key, sp] of Object.entries(unpackJson<Record<string, NonNullable<Bucket[string]['sp']>>>(doc.s))) if (b[key]) b[key].sp = sp;
  return { _id: doc._id, b, ...(doc.merged && { merged: doc.merged }) };
}

/** Whether a read wants the span groups (a group's page, the rollup) or only the counts (the lists). */
export interface BucketRead {
  spans: boolean;
}

export interface SampleDoc {
  _id: string;
  project_id: number;
  trace_id: string;
  group: string;
  name: string;
  /** when it ended */
  at: Date;
  duration: number;
  failed: boolean;
  received_at: Date;
  data: Binary;
}

export interface LogChunkDoc {
  _id: string;
  project_id: number;
  n: number;
  /** the first 8 hex digits of each trace id named, comma-separated */
  traces: string;
  from: Date;
  to: Date;
  data: Binary;
}

export interface TraceErrorsDoc {
  _id: string;
  /** trace id → the error events (ids) that named it, with when each happened */
  x: Record<string, { id: string; at: number; issue: number | null; span_id: string | null }[]>;
}

/** Names a process remembers having written (past this it forgets them all and learns them again), and having read. */
const NAMES_REMEMBERED = 100_000;

export { DAY_MS, HOUR_MS, MINUTE_MS };
export type Period = 'minute' | 'hour' | 'day';
export const PERIOD_MS: Record<Period, number> = { minute: MINUTE_MS, hour: HOUR_MS, day: DAY_MS };
/** Most buckets read by their ids in one read (FerretDB's patched `$in` takes up to 1,000). */
export const BY_IDS_MAX = 1000;
const COLLECTION: Record<Period, string> = { minute: 'perf_minutes', hour: 'perf_hours', day: 'perf_days' };

/** The `_id` of a project's bucket (or part, chunk) starting at `ms`. */
export const timeKey = (project: number, ms: number) => `${project}:${sortableMs(ms)}`;

/** The ids of a project's buckets of a period starting in [from, to), oldest first. */
export function bucketIds(period: Period, project: number, from: number, to: number): string[] {
  const length = PERIOD_MS[period];
  const ids: string[] = [];
  for (let t = Math.ceil(from / length) * length; t < to; t += length) ids.push(timeKey(project, t));
  return ids;
}
/** The start of a time key's period. */
export const timeOfKey = (key: string) => Number(key.split(':')[1]);

export function makeTracesStore(db: Db) {
  const raw = db.collection<TraceGroupDoc>('trace_raw');
  const backlog = makeBacklog(db, 'trace_backlog');
  const parts = db.collection<StoredBucket>('perf_parts');
  const buckets = (period: Period) => db.collection<StoredBucket>(COLLECTION[period]);
  /** A project's buckets (or parts) in [from, to), with their span groups or without. */
  const bucketRange = async (coll: import('mongodb').Collection<StoredBucket>, project: number, from: number, to: number, read: BucketRead) =>
    (await coll.find({ _id: { $gte: timeKey(project, from), $lt: timeKey(project, to) } }, read.spans ? {} : { projection: { s: 0 } }).toArray()).map(fromStored);
  /** The buckets of a period with these ids (BY_IDS_MAX at most), those that exist. */
  const bucketsByIds = async (period: Period, ids: string[], read: BucketRead = { spans: true }): Promise<BucketDoc[]> =>
    ids.length === 0 ? [] : (await buckets(period).find({ _id: { $in: ids } }, read.spans ? {} : { projection: { s: 0 } }).toArray()).map(fromStored);
  const names = db.collection<{ _id: string } & Partial<GroupParts & SpanParts>>('perf_names');
  const samples = db.collection<SampleDoc>('trace_samples');
  const logs = db.collection<LogChunkDoc>('log_chunks');
  const errors = db.collection<TraceErrorsDoc>('trace_errors');
  const rollup = db.collection<{ _id: string; until: number }>('perf_rollup');
  /** The names this process has written (or found written), so a job naming known groups writes nothing. */
  const namesRead = new LRUCache<string, GroupParts & SpanParts>({ max: NAMES_REMEMBERED });
  const namesWritten = new Set<string>();

  /** Inserts documents once: one already there (a retried job's) is left as it is. */
  async function insertOnce<T extends { _id: string }>(coll: import('mongodb').Collection<T>, docs: T[]): Promise<void> {
    if (docs.length === 0) return;
    try {
      await coll.insertMany(docs as import('mongodb').OptionalUnlessRequiredId<T>[], { ordered: false });
    } catch (err) {
      const writeErrors = (err as { writeErrors?: unknown[] | unknown }).writeErrors;
      const list = Array.isArray(writeErrors) ? writeErrors : writeErrors ? [writeErrors] : [];
      if (!isDuplicateKey(err) && !(list.length > 0 && list.every((e) => (e as { code?: number }).code === 11000))) throw err;
    }
  }

  /** A project's documents of a time-keyed collection in [from, to). */
  const range = <T extends { _id: string }>(coll: import('mongodb').Collection<T>, project: number, from: number, to: number) =>
    coll.find({ _id: { $gte: timeKey(project, from), $lt: timeKey(project, to) } } as import('mongodb').Filter<T>).toArray();

  return {
    backlog,
    async ensureIndexes() {
      await backlog.ensureIndexes();
    },

    /** What was received together, durably: the backlog marker first, then the group. */
    async insertGroup(items: Received[]): Promise<JobTraces> {
      const { _id } = await backlog.take();
      const received_at = new Date();
      await raw.insertOne({ _id, received_at, data: packJson(items, 'fast') });
      return { id: _id, received_at: received_at.toISOString(), items };
    },
    /** Groups by id (a swept job carries only ids). */
    async ofGroups(ids: string[]): Promise<JobTraces[]> {
      const docs = await raw.find({ _id: { $in: ids } }).toArray();
      return docs.map((d) => ({ id: d._id, received_at: d.received_at.toISOString(), items: unpackJson<Received[]>(d.data) }));
    },
    /** Which of these groups are still waiting for their job. */
    ofGroupIds: async (ids: string[]) => (ids.length ? (await raw.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray()).map((d) => d._id) : []),
    /** Applied groups go (their counts, samples and lines are written). */
    async forgetGroups(ids: string[]): Promise<void> {
      if (ids.length) await raw.deleteMany({ _id: { $in: ids } });
      await backlog.finish(ids);
    },

    /** A job's counts, once per `_id`. */
    writeParts: (docs: BucketDoc[]) => insertOnce(parts, docs.map(toStored)),
    /** Parts not merged yet, oldest first (the collection holds only the last seconds'). */
    pendingParts: async (limit: number) => (await parts.find({}).sort({ _id: 1 }).limit(limit).toArray()).map(fromStored),
    /** A project's parts of minutes in [from, to) (reads add what the rollup has not merged yet). */
    partsIn: (project: number, from: number, to: number, read: BucketRead = { spans: true }) => bucketRange(parts, project, from, to, read),
    deleteParts: async (ids: string[]) => {
      if (ids.length) await parts.deleteMany({ _id: { $in: ids } });
    },

    bucket: async (period: Period, id: string) => {
      const doc = await buckets(period).findOne({ _id: id });
      return doc && fromStored(doc);
    },
    /**
     * A project's buckets of a period in [from, to), read by their ids: FerretDB v1 serves a list of ids (`$in`) from
     * its index but reads the whole collection for an `_id` range. A range longer than BY_IDS_MAX periods (a rollup
     * that stopped for days) is read as a range.
     */
    async bucketsIn(period: Period, project: number, from: number, to: number, read: BucketRead = { spans: true }): Promise<BucketDoc[]> {
      const ids = bucketIds(period, project, from, to);
      if (ids.length > BY_IDS_MAX) return bucketRange(buckets(period), project, from, to, read);
      return (await bucketsByIds(period, ids, read)).sort((a, b) => (a._id < b._id ? -1 : 1));
    },
    bucketsByIds,
    /** Buckets written in bulk, once per `_id` (a restore; the read benchmark's generated month). */
    insertBuckets: (period: Period, docs: BucketDoc[]) => insertOnce(buckets(period), docs.map(toStored)),
    async saveBucket(period: Period, doc: BucketDoc): Promise<void> {
      await buckets(period).replaceOne({ _id: doc._id }, toStored(doc), { upsert: true });
    },
    /** A project's buckets of a period before `before` go; how many. */
    async forgetBuckets(period: Period, project: number, before: number): Promise<number> {
      return (await buckets(period).deleteMany({ _id: { $gte: `${project}:`, $lt: timeKey(project, before) } })).deletedCount;
    },
    /** How far the hours (or days) have been summed: every period before it is written. */
    rolledUntil: async (period: 'hour' | 'day') => (await rollup.findOne({ _id: period }))?.until ?? 0,
    /** An hour already summed that a late part changes, to be summed again (`resum:<project>:<hour>`). */
    noteResum: async (project: number, hour: number) => {
      await rollup.replaceOne({ _id: `resum:${project}:${hour}` }, { until: hour }, { upsert: true });
    },
    /** The hours noted and not yet summed again. */
    resumsNoted: async () =>
      (await rollup.find({ _id: { $gte: 'resum:', $lt: 'resum;' } }).toArray()).map((d) => ({ project: Number(d._id.split(':')[1]), hour: d.until })),
    resumDone: async (project: number, hour: number) => {
      await rollup.deleteOne({ _id: `resum:${project}:${hour}` });
    },
    setRolledUntil: async (period: 'hour' | 'day', until: number) => {
      await rollup.replaceOne({ _id: period }, { until }, { upsert: true });
    },

    /**
     * Keeps the parts of groups and span groups seen for the first time; names this process wrote before are not
     * written again (most jobs name only known groups, and each refused insert costs the store a write).
     */
    async saveNames(project: number, groups: Map<string, GroupParts>, spans: Map<string, SpanParts>): Promise<void> {
      const docs = [...[...groups].map(([k, g]) => ({ _id: `${project}:g:${k}`, ...g })), ...[...spans].map(([k, s]) => ({ _id: `${project}:s:${k}`, ...s }))].filter((d) => !namesWritten.has(d._id));
      await insertOnce(names, docs);
      if (namesWritten.size + docs.length > NAMES_REMEMBERED) namesWritten.clear();
      for (const d of docs) namesWritten.add(d._id);
    },
    /** The parts of these groups (or span groups) that have them; a name never changes once written, so what was read is kept. */
    async namesOf(project: number, kind: 'g' | 's', keys: string[]): Promise<Map<string, GroupParts & SpanParts>> {
      const prefix = `${project}:${kind}:`;
      const out = new Map<string, GroupParts & SpanParts>();
      const missing: string[] = [];
      for (const k of keys) {
        const known = namesRead.get(prefix + k);
        if (known) out.set(k, known);
        else missing.push(prefix + k);
      }
      if (missing.length === 0) return out;
      for (const { _id, ...rest } of await names.find({ _id: { $in: missing } }).toArray()) {
        namesRead.set(_id, rest as GroupParts & SpanParts);
        out.set(_id.slice(prefix.length), rest as GroupParts & SpanParts);
      }
      return out;
    },

    writeSamples: (docs: SampleDoc[]) => insertOnce(samples, docs),
    /** The samples of a trace. */
    samplesOfTrace: (project: number, trace: string) => samples.find({ _id: { $gte: `${project}:${trace}:`, $lt: `${project}:${trace};` } }).toArray(),
    /** A trace's samples by their span ids. */
    samplesOfSpans: (project: number, trace: string, spans: string[]) => (spans.length ? samples.find({ _id: { $in: spans.map((s) => `${project}:${trace}:${s}`) } }).toArray() : Promise.resolve([])),
    sample: (project: number, trace: string, span: string) => samples.findOne({ _id: `${project}:${trace}:${span}` }),
    /** A group's samples (a scan of the samples: they are few, held by their budget). */
    samplesOfGroup: (project: number, groups: string[], since: Date, limit: number) =>
      samples
        .find({ _id: { $gte: `${project}:`, $lt: `${project};` }, group: { $in: groups }, at: { $gte: since } }, { projection: { data: 0 } })
        .sort({ duration: -1 })
        .limit(limit)
        .toArray(),
    async forgetSamples(before: Date): Promise<number> {
      return (await samples.deleteMany({ received_at: { $lt: before } })).deletedCount;
    },

    writeLogChunks: (docs: LogChunkDoc[]) => insertOnce(logs, docs),
    /** A project's log chunks of minutes in [from, to), newest first, `limit` at most. */
    logChunksIn: (project: number, from: number, to: number, limit: number) =>
      logs
        .find({ _id: { $gte: timeKey(project, from), $lt: timeKey(project, to) } })
        .sort({ _id: -1 })
        .limit(limit)
        .toArray(),
    /** Only the trace ids of a project's chunks in [from, to) (the trace page reads the matching ones whole). */
    logChunkTracesIn: (project: number, from: number, to: number) =>
      logs.find({ _id: { $gte: timeKey(project, from), $lt: timeKey(project, to) } }, { projection: { traces: 1 } }).toArray() as Promise<Pick<LogChunkDoc, '_id' | 'traces'>[]>,
    logChunks: (ids: string[]) => (ids.length ? logs.find({ _id: { $in: ids } }).toArray() : Promise.resolve([])),
    /** Only the trace ids of the chunks named. */
    logChunkTraces: (ids: string[]) =>
      (ids.length ? logs.find({ _id: { $in: ids } }, { projection: { traces: 1 } }).toArray() : Promise.resolve([])) as Promise<Pick<LogChunkDoc, '_id' | 'traces'>[]>,
    async forgetLogs(project: number, before: number): Promise<number> {
      return (await logs.deleteMany({ _id: { $gte: `${project}:`, $lt: timeKey(project, before) } })).deletedCount;
    },

    writeTraceErrors: (docs: TraceErrorsDoc[]) => insertOnce(errors, docs),
    traceErrors: (ids: string[]) => (ids.length ? errors.find({ _id: { $in: ids } }).toArray() : Promise.resolve([])),
    traceErrorsIn: (project: number, from: number, to: number) => range(errors, project, from, to),
    async forgetTraceErrors(project: number, before: number): Promise<number> {
      return (await errors.deleteMany({ _id: { $gte: `${project}:`, $lt: timeKey(project, before) } })).deletedCount;
    },
  };
}
export type TracesStore = ReturnType<typeof makeTracesStore>;
