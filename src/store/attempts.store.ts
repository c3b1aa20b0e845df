/**
 * Sign-in attempts, packed (issue 25). The API writes the attempts of one
 * group and project as one document, their events as one deflated JSON array:
 * an attempt is some 300 bytes of JSON, and a document of its own costs
 * FerretDB v1 about 1.4 KB of disk (a type schema per field, row and page
 * overhead), where a hundred packed together take some 46 bytes each.
 *
 * Each attempt still has a key document in the events collection, `{_id:
 * '<project>:<event_id>', b: <group>}`, written after its group's packed
 * document: the store refuses a second attempt (or error event) with the
 * same `event_id`, as it does for error events, and the key names the group
 * that owns the attempt. An attempt whose key is missing (the API died
 * between the two writes, so it was never acknowledged) or names another
 * group (a duplicate) is not read back: `owned` keeps only the owners'.
 */
import zlib from 'node:zlib';
import { Binary, type Db, type IndexDescription } from 'mongodb';
import { ensureIndexes } from './mongo.ts';

/** What Lookout reads of a sign-in attempt's event (spec 2.6); the rest of the event is kept as sent. */
export interface AttemptBody {
  event_id: string;
  timestamp: string;
  release?: string;
  environment?: string;
  tags?: Record<string, string>;
  security: { kind: string; actor?: string; actor_id?: string; ip?: string };
  [key: string]: unknown;
}

/** One group's attempts of one project. */
export interface AttemptsDoc {
  /** `<group>:<project>` */
  _id: string;
  project_id: number;
  /** the group the API wrote them in */
  batch: string;
  received_at: Date;
  /** the latest `timestamp` among them (reads of a time range skip older documents) */
  at_max: Date;
  count: number;
  /** their events (normalised and scrubbed) as a JSON array, raw-deflated */
  packed: Binary;
}

/** The key document of an attempt in the events collection. */
export interface AttemptKey {
  _id: string;
  /** the group that owns the attempt */
  b: string;
}

/** An attempt as it is read back. */
export interface StoredAttempt {
  /** its key: `<project>:<event_id>` */
  _id: string;
  project_id: number;
  event_id: string;
  batch: string;
  received_at: Date;
  at: Date;
  security_kind: string;
  actor: string | null;
  ip: string | null;
  /** `<actor>|<ip>` */
  group_key: string;
  release: string | null;
  environment: string | null;
  company: string | null;
  body: AttemptBody;
}

/** What grouping and detection read of an attempt, from its event. */
export function attemptFields(body: AttemptBody) {
  const actor = body.security.actor ?? body.security.actor_id ?? null;
  const ip = body.security.ip ?? null;
  return {
    event_id: body.event_id,
    at: new Date(body.timestamp),
    security_kind: body.security.kind,
    actor,
    ip,
    group_key: `${actor}|${ip ?? '-'}`,
    release: body.release ?? null,
    environment: body.environment ?? null,
    company: body.tags?.company ?? null,
  };
}

export const attemptsIndexes: IndexDescription[] = [
  { key: { batch: 1 }, name: 'batch' },
  { key: { project_id: 1, at_max: 1 }, name: 'project_at' },
  { key: { received_at: 1 }, name: 'retention' },
];

/** Most ids in one read of keys (the embedded FerretDB reads an `$in` of up to 1,000 ids through its index). */
const KEYS_PER_READ = 1000;

export function makeAttemptsStore(db: Db, opts: { ferretdb: boolean }) {
  const packs = db.collection<AttemptsDoc>('attempts');
  /** the keys, in the events collection beside the error events */
  const keys = db.collection<AttemptKey>('events');

  function unpack(doc: AttemptsDoc): StoredAttempt[] {
    const bodies = JSON.parse(zlib.inflateRawSync(doc.packed.buffer).toString('utf8')) as AttemptBody[];
    return bodies.map((body) => ({
      _id: `${doc.project_id}:${body.event_id}`,
      project_id: doc.project_id,
      batch: doc.batch,
      received_at: doc.received_at,
      ...attemptFields(body),
      body,
    }));
  }

  /** The attempts of the documents whose keys name their group, each once. */
  async function owned(docs: AttemptsDoc[]): Promise<StoredAttempt[]> {
    const all = docs.flatMap(unpack);
    const owner = new Map<string, string>();
    for (let i = 0; i < all.length; i += KEYS_PER_READ) {
      const ids = [...new Set(all.slice(i, i + KEYS_PER_READ).map((a) => a._id))];
      for (const key of await keys.find({ _id: { $in: ids } }, { projection: { b: 1 } }).toArray()) owner.set(key._id, key.b);
    }
    const seen = new Set<string>();
    return all.filter((a) => {
      if (owner.get(a._id) !== a.batch || seen.has(a._id)) return false;
      seen.add(a._id);
      return true;
    });
  }

  return {
    collection: packs,
    async ensureIndexes() {
      // FerretDB v1 (SQLite) answers no query from an index: there they would only slow every insert.
      if (!opts.ferretdb) await ensureIndexes(packs, attemptsIndexes);
    },
    /** The group's attempts, one document per project; written before their keys. */
    async insert(group: string, receivedAt: Date, byProject: Map<number, AttemptBody[]>): Promise<void> {
      const docs = [...byProject].map(([project, bodies]): AttemptsDoc => ({
        _id: `${group}:${project}`,
        project_id: project,
        batch: group,
        received_at: receivedAt,
        at_max: new Date(Math.max(...bodies.map((b) => new Date(b.timestamp).getTime()))),
        count: bodies.length,
        packed: new Binary(zlib.deflateRawSync(JSON.stringify(bodies))),
      }));
      if (docs.length > 0) await packs.insertMany(docs);
    },
    /** The attempt of a key. */
    async ofKey(key: AttemptKey): Promise<StoredAttempt | null> {
      const project = Number(key._id.slice(0, key._id.indexOf(':')));
      const doc = await packs.findOne({ _id: `${key.b}:${project}` });
      return (doc && unpack(doc).find((a) => a._id === key._id)) ?? null;
    },
    /** The attempts the groups stored and own (a swept job carries only the groups' ids). */
    async ofBatches(batches: string[]): Promise<StoredAttempt[]> {
      return owned(await packs.find({ batch: { $in: batches } }).toArray());
    },
    /** A project's attempts since `since`, in chunks of documents (a rebuild streams them; the alert preview reads a day). */
    async *ofProject(projectId: number, since: Date = new Date(0)): AsyncGenerator<StoredAttempt[]> {
      const cursor = packs.find({ project_id: projectId, at_max: { $gte: since } }, { batchSize: 100 });
      let docs: AttemptsDoc[] = [];
      const take = async () => (await owned(docs.splice(0))).filter((a) => a.at >= since);
      for await (const doc of cursor) {
        docs.push(doc);
        if (docs.length >= 100) yield await take();
      }
      yield await take();
    },
    /** The documents received before `before`, of the listed projects or of all but the listed (retention), without their attempts. */
    expiredOf(before: Date, projects: { in: number[] } | { notIn: number[] }) {
      const project = 'in' in projects ? { $in: projects.in } : { $nin: projects.notIn };
      return packs.find<Pick<AttemptsDoc, '_id' | 'project_id' | 'batch' | 'count'>>(
        { received_at: { $lt: before }, project_id: project },
        { projection: { _id: 1, project_id: 1, batch: 1, count: 1 }, batchSize: 100 },
      );
    },
    /** Deletes a document and the keys its group owns; run again after a crash, it finishes. Returns the keys deleted. */
    async delete(id: string): Promise<number> {
      const doc = await packs.findOne({ _id: id });
      if (!doc) return 0;
      const ids = [...new Set(unpack(doc).map((a) => a._id))];
      let deleted = 0;
      for (let i = 0; i < ids.length; i += KEYS_PER_READ) {
        deleted += (await keys.deleteMany({ _id: { $in: ids.slice(i, i + KEYS_PER_READ) }, b: doc.batch })).deletedCount;
      }
      await packs.deleteOne({ _id: id });
      return deleted;
    },
  };
}
export type AttemptsStore = ReturnType<typeof makeAttemptsStore>;
