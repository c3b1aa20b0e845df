/**
 * Raw events, one document per (project, event_id): the _id is
 * `<project>:<event_id>`, so the store itself refuses a duplicate for as long
 * as the event is retained. An error event's document holds the event; a
 * sign-in attempt's is only its key, `{_id, b: <group>}`, and the attempt is
 * packed with its group's others (src/store/attempts.store.ts). Events are
 * written insert-only, in groups (the group's packed attempts, then one
 * unordered insertMany of its error events and keys), and never updated.
 *
 * `event_backlog` (src/store/backlog.ts) holds a marker per group not yet
 * flushed, written before the group's events and deleted by the flusher once
 * the issues the events changed are in MongoDB. The events of a marker are
 * found by their `batch` field (recovery only).
 */
import { Binary, type Collection, type Db, type IndexDescription } from 'mongodb';
import { makeAttemptsStore, type AttemptBody, type AttemptKey, type StoredAttempt } from './attempts.store.ts';
import { makeBacklog } from './backlog.ts';
import { ensureIndexes, isDuplicateKey, type StoreProfile } from './mongo.ts';
import { packText, unpackText } from './packing.ts';

export interface EventDoc {
  _id: string;
  project_id: number;
  event_id: string;
  /** the group the API wrote it in */
  batch: string;
  kind: 'security' | 'error';
  /*
   * The fields of the other kind are left out rather than stored null: on FerretDB v1 each field costs
   * some 40 bytes of type schema in every row, and the row of a ~6 KB error event must stay under a third
   * of a page (docs/decisions.md). Documents stored before hold them as null.
   */
  /** security events: login_failed, login_succeeded, … */
  security_kind?: string | null;
  /** security events: actor or actor_id */
  actor?: string | null;
  ip?: string | null;
  /** security events: their brute-force group (src/domain/client-keys.ts' attemptGroupKey) */
  group_key?: string | null;
  /** error events */
  fingerprint?: string | null;
  /** error events with JavaScript frames that source maps may map: the worker maps them before grouping (issue 52) */
  js_frames?: true;
  release: string | null;
  /** (events stored before these two were kept lack them) */
  environment?: string | null;
  /** the `company` tag */
  company?: string | null;
  at: Date;
  received_at: Date;
  /**
   * The event as stored (normalised and scrubbed), as JSON compressed with
   * raw deflate (`packPayload`): only the issue page shows it, FerretDB v1
   * writes and reads one binary value several times faster than the same
   * fields as a document, and a quarter of the bytes on disk
   * (docs/decisions.md). Events under 1 KiB of JSON (most sign-in attempts),
   * and events stored before compression, hold the JSON text.
   */
  payload: Binary | string;
}

/** Smaller events are stored as their JSON text: deflate would save them little and cost each its setup. */
const PACK_FROM_BYTES = 1024;

/** An event's JSON as it is stored. */
export function packPayload(event: unknown): Binary | string {
  const json = JSON.stringify(event);
  return json.length < PACK_FROM_BYTES ? json : packText(json, 'fast');
}

/** The stored event, whichever form it was stored in. */
export function payloadOf(doc: Pick<EventDoc, 'payload'>): Record<string, unknown> {
  const json = typeof doc.payload === 'string' ? doc.payload : unpackText(doc.payload);
  return JSON.parse(json) as Record<string, unknown>;
}

export const eventIndexes: IndexDescription[] = [
  { key: { batch: 1 }, name: 'batch' },
  { key: { project_id: 1, kind: 1, at: 1 }, name: 'project_kind_at' },
  { key: { received_at: 1 }, name: 'retention' },
];

/** What retention reads of an expired event: enough to delete it and keep its issue's counts. */
export type ExpiredEvent = Pick<EventDoc, '_id' | 'project_id' | 'event_id' | 'kind' | 'fingerprint' | 'release' | 'environment' | 'company'>;

/** What the burst detectors read of a stored sign-in attempt. */
export type AttemptSummary = Pick<StoredAttempt, 'event_id' | 'at' | 'security_kind' | 'actor' | 'ip' | 'group_key'>;

export function eventKey(projectId: number, eventId: string): string {
  return `${projectId}:${eventId}`;
}

export function makeEventsStore(db: Db, profile: StoreProfile) {
  const events = db.collection<EventDoc>('events');
  const backlog = makeBacklog(db, 'event_backlog');
  const attempts = makeAttemptsStore(db, profile);
  return {
    collection: events,
    backlog,
    async ensureIndexes() {
      if (profile.secondaryIndexes) await ensureIndexes(events, eventIndexes);
      await attempts.ensureIndexes();
      await backlog.ensureIndexes();
    },
    attempts,
    /**
     * One group, durably: its backlog marker, its sign-in attempts packed per
     * project, then its error events (their `batch` set to the group's id)
     * and the attempts' keys in one unordered insert. Returns the group's id
     * and the positions of the items refused as duplicates (stored before, by
     * an earlier group or earlier in this one); every other item is stored.
     */
    async insertGroup(items: ({ doc: EventDoc } | { attempt: AttemptBody; project: number })[], receivedAt: Date): Promise<{ id: string; duplicates: Set<number> }> {
      const { _id: id } = await backlog.take();
      const byProject = new Map<number, AttemptBody[]>();
      const docs = items.map((item): EventDoc | AttemptKey => {
        if ('doc' in item) return { ...item.doc, batch: id };
        const list = byProject.get(item.project) ?? byProject.set(item.project, []).get(item.project)!;
        list.push(item.attempt);
        return { _id: eventKey(item.project, item.attempt.event_id), b: id };
      });
      await attempts.insert(id, receivedAt, byProject);
      const duplicates = new Set<number>();
      try {
        await (events as unknown as Collection<EventDoc | AttemptKey>).insertMany(docs, { ordered: false });
      } catch (err) {
        const writeErrors = (err as { writeErrors?: { code: number; index: number }[] }).writeErrors;
        if (!Array.isArray(writeErrors) && !isDuplicateKey(err)) throw err;
        for (const e of writeErrors ?? []) {
          if (e.code !== 11000) throw err;
          duplicates.add(e.index);
        }
      }
      return { id, duplicates };
    },
    /** The events the groups stored (a swept job carries only the groups' ids). */
    ofBatches(batches: string[]): Promise<EventDoc[]> {
      return events.find({ batch: { $in: batches } }).toArray();
    },
    get(id: string): Promise<EventDoc | null> {
      return events.findOne({ _id: id });
    },
    /** The stored event of an id, an error event or a sign-in attempt (null: none, or deleted by retention). */
    async body(id: string): Promise<Record<string, unknown> | null> {
      const doc = (await events.findOne({ _id: id })) as EventDoc | AttemptKey | null;
      if (!doc) return null;
      if ('payload' in doc) return payloadOf(doc);
      return (await attempts.ofKey(doc))?.body ?? null;
    },
    /**
     * Events by `_id`: an error event's document, or a sign-in attempt's key naming its group (the embedded FerretDB
     * reads an `$in` of ids through its index: tools/ferretdb/patches.json).
     */
    getMany(ids: string[]): Promise<(EventDoc | AttemptKey)[]> {
      return ids.length === 0 ? Promise.resolve([]) : (events.find({ _id: { $in: ids } }).toArray() as Promise<(EventDoc | AttemptKey)[]>);
    },
    /**
     * Error events the worker mapped through source maps: the mapped payload, and when grouped by it, the fingerprint
     * (the event is then no longer flagged `js_frames`: a retried job groups it by what is stored).
     */
    async rewrite(changes: { _id: string; payload: unknown; fingerprint?: string }[]): Promise<void> {
      if (changes.length === 0) return;
      await events.bulkWrite(
        changes.map((c) => ({
          updateOne: {
            filter: { _id: c._id },
            update: c.fingerprint ? { $set: { payload: packPayload(c.payload), fingerprint: c.fingerprint }, $unset: { js_frames: '' } } : { $set: { payload: packPayload(c.payload) } },
          },
        })),
        { ordered: false },
      );
    },
    /**
     * Events received before `before`, of the projects listed in `projects.in`
     * or of every project but those in `projects.notIn` (retention). MongoDB
     * reads them from the `retention` index; FerretDB v1 scans the collection.
     */
    expiredOf(before: Date, projects: { in: number[] } | { notIn: number[] }) {
      const project = 'in' in projects ? { $in: projects.in } : { $nin: projects.notIn };
      const fields = { _id: 1, project_id: 1, event_id: 1, kind: 1, fingerprint: 1, release: 1, environment: 1, company: 1 } as const;
      return events.find<ExpiredEvent>({ received_at: { $lt: before }, project_id: project }, { projection: fields, batchSize: 1000 });
    },
    async deleteIds(ids: string[]): Promise<number> {
      return ids.length === 0 ? 0 : (await events.deleteMany({ _id: { $in: ids } })).deletedCount;
    },
    /**
     * A project's sign-in attempts since `since`, what the detectors read of them, in chunks: those stored as
     * documents of their own (before attempts were packed), then the packed ones (a rebuild streams them; the
     * alert preview reads a day).
     */
    async *attemptsSince(projectId: number, since: Date): AsyncGenerator<AttemptSummary[]> {
      const chunk: AttemptSummary[] = [];
      for await (const doc of this.ofProject(projectId, 'security', since)) {
        chunk.push({ event_id: doc.event_id, at: doc.at, security_kind: doc.security_kind ?? '', actor: doc.actor ?? null, ip: doc.ip ?? null, group_key: doc.group_key ?? '' });
        if (chunk.length >= 1000) yield chunk.splice(0);
      }
      if (chunk.length > 0) yield chunk;
      yield* attempts.ofProject(projectId, since);
    },
    /** A project's events of one kind since `since`, without their payloads, as a cursor (the alert preview reads a day). */
    ofProject(projectId: number, kind: EventDoc['kind'], since: Date = new Date(0)) {
      return events.find<Omit<EventDoc, 'payload'>>({ project_id: projectId, kind, at: { $gte: since } }, { projection: { payload: 0 }, batchSize: 1000 });
    },
    /** A project's error events whole, as a cursor: a rebuild counts their users and tags. */
    errorsOf(projectId: number) {
      return events.find({ project_id: projectId, kind: 'error' }, { batchSize: 500 });
    },
  };
}
export type EventsStore = ReturnType<typeof makeEventsStore>;
