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
import { setTimeout as sleep } from 'node:timers/promises';
import { type Binary, type Db, type IndexDescription } from 'mongodb';
import { attemptGroupKey } from '../domain/client-keys.ts';
import { groupTime } from '../util/group-commit.ts';
import { ensureIndexes, insertOnce, type StoreProfile } from './mongo.ts';
import { packJson, unpackJson } from './packing.ts';

/** What Lookout reads of a sign-in attempt's event (spec 2.6); the rest of the event is kept as sent. */
export interface AttemptBody {
  event_id: string;
  timestamp: string;
  release?: string;
  environment?: string;
  tags?: Record<string, string>;
  security: { kind: string; actor?: string; actor_id?: string; ip?: string; user_agent?: string; outcome?: string };
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
  /**
   * Raw-deflated JSON: a group's events (normalised and scrubbed) as an array; a repacked part's as
   * `PartContents`, where the groups' ids cost a few bytes each (as fields, FerretDB v1 gives each array
   * element a type of its own, some 15 bytes an attempt)
   */
  packed: Binary;
  /** part 0 of a repacked minute: the first group of each further part */
  parts?: string[];
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
  /** its brute-force group: src/domain/client-keys.ts' attemptGroupKey of actor and ip */
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
    group_key: attemptGroupKey(actor, ip),
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

/**
 * Most group documents the repacker deletes in one call: each call holds the embedded FerretDB's one writer, which
 * ingestion's inserts wait for; 50 hold it about 2.5 ms (100 held it 6 ms).
 */
const DELETES_PER_CALL = 50;
/** Most group documents the repacker reads in one call. */
const GROUPS_PER_READ = 200;

/** The shortest rest of the repacker between two steps. */
const REST_MS = 5;

/**
 * How the repacker spaces its steps: after each, it rests as long as the step took (at least REST_MS) and, given a
 * spread, until the share of `ms` that the work done so far stands for has passed. A minute of groups at 800
 * attempts/s is a few seconds of the embedded FerretDB's work: done in one go, it held ingestion's writes back each
 * minute; resting as long as each step took still left FerretDB busy for ten seconds (docs/performance.md). Once the
 * signal aborts (the worker is stopping), only the step's own time is rested.
 */
export function makePace(opts: { spread?: { ms: number; units: number }; signal?: AbortSignal } = {}) {
  const started = performance.now();
  let done = 0;
  /** Runs a step that did `units` of the work, then rests. */
  return async function paced<T>(units: number, step: () => Promise<T>): Promise<T> {
    const stepStarted = performance.now();
    const result = await step();
    const now = performance.now();
    done += units;
    const spread = opts.spread && !opts.signal?.aborted ? started + opts.spread.ms * Math.min(1, done / Math.max(1, opts.spread.units)) - now : 0;
    await sleep(Math.max(REST_MS, now - stepStarted, spread), undefined, { signal: opts.signal }).catch(() => {});
    return result;
  };
}
export type Pace = ReturnType<typeof makePace>;

/** The span of group ids repacked together: a minute, by the time at the head of the id (src/util/group-commit.ts). */
export const REPACK_BUCKET_MS = 60_000;
/** Most attempts in a repacked part, give or take a group: some 40 bytes each on disk, a part about 200 KB. */
const PART_ATTEMPTS = 5_000;

function repackBucket(group: string): number {
  return Math.floor(groupTime(group) / REPACK_BUCKET_MS);
}

function partId(project: number, bucket: number, part: number): string {
  return `r:${project}:${bucket}:${part}`;
}

/** What a repacked part packs: the groups its attempts came in, in order, how many attempts each, and their events. */
interface PartContents {
  groups: string[];
  sizes: number[];
  events: AttemptBody[];
}

/** A document's events, and the group of each. */
function contents(doc: AttemptsDoc): { bodies: AttemptBody[]; groups: string[] } {
  const data = unpackJson<AttemptBody[] | PartContents>(doc.packed);
  if (Array.isArray(data)) return { bodies: data, groups: data.map(() => doc.batch) };
  return { bodies: data.events, groups: data.groups.flatMap((group, i) => Array.from({ length: data.sizes[i]! }, () => group)) };
}

/** The part of a repacked minute that holds `group`, from the first group of each further part. */
function partIndex(parts: string[] | undefined, group: string): number {
  return (parts ?? []).filter((first) => first <= group).length;
}

export function makeAttemptsStore(db: Db, profile: StoreProfile) {
  const packs = db.collection<AttemptsDoc>('attempts');
  /** the keys, in the events collection beside the error events */
  const keys = db.collection<AttemptKey>('events');

  function unpack(doc: AttemptsDoc): StoredAttempt[] {
    const { bodies, groups } = contents(doc);
    return bodies.map((body, i) => ({
      _id: `${doc.project_id}:${body.event_id}`,
      project_id: doc.project_id,
      batch: groups[i]!,
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
      if (profile.secondaryIndexes) await ensureIndexes(packs, attemptsIndexes);
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
        packed: packJson(bodies, 'fast'),
      }));
      if (docs.length > 0) await packs.insertMany(docs);
    },
    /** The attempt of a key: in its group's document or, once repacked, in the part its minute's part 0 points to. */
    async ofKey(key: AttemptKey): Promise<StoredAttempt | null> {
      const project = Number(key._id.slice(0, key._id.indexOf(':')));
      let doc = await packs.findOne({ _id: `${key.b}:${project}` });
      if (!doc) {
        const bucket = repackBucket(key.b);
        doc = await packs.findOne({ _id: partId(project, bucket, 0) });
        const part = partIndex(doc?.parts, key.b);
        if (doc && part > 0) doc = await packs.findOne({ _id: partId(project, bucket, part) });
      }
      return (doc && unpack(doc).find((a) => a._id === key._id && a.batch === key.b)) ?? null;
    },
    /** The attempts of keys (a security issue's page of attempts), each read as `ofKey` reads it; missing ones left out. */
    async ofKeys(keys: AttemptKey[]): Promise<StoredAttempt[]> {
      const found = await Promise.all(keys.map((key) => this.ofKey(key)));
      return found.filter((a): a is StoredAttempt => a !== null);
    },
    /** The attempts the groups stored and own (a swept job carries only the groups' ids). */
    async ofBatches(batches: string[]): Promise<StoredAttempt[]> {
      return owned(await packs.find({ batch: { $in: batches } }).toArray());
    },
    /** A project's attempts since `since`, in chunks of documents (a rebuild streams them; the alert preview reads a day). */
    async *ofProject(projectId: number, since: Date = new Date(0)): AsyncGenerator<StoredAttempt[]> {
      // A chunk is up to 100 documents or some 2,000 attempts: a repacked part alone holds 5,000.
      const cursor = packs.find({ project_id: projectId, at_max: { $gte: since } }, { batchSize: 20 });
      const docs: AttemptsDoc[] = [];
      let attempts = 0;
      const take = async () => {
        attempts = 0;
        return (await owned(docs.splice(0))).filter((a) => a.at >= since);
      };
      for await (const doc of cursor) {
        docs.push(doc);
        attempts += doc.count;
        if (docs.length >= 100 || attempts >= 2000) yield await take();
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
    /** Deletes a document and the keys its groups own; run again after a crash, it finishes. Returns the keys deleted. */
    async delete(id: string): Promise<number> {
      const doc = await packs.findOne({ _id: id });
      if (!doc) return 0;
      const attempts = unpack(doc);
      const ids = [...new Set(attempts.map((a) => a._id))];
      const owners = { $in: [...new Set(attempts.map((a) => a.batch))] };
      let deleted = 0;
      for (let i = 0; i < ids.length; i += KEYS_PER_READ) {
        deleted += (await keys.deleteMany({ _id: { $in: ids.slice(i, i + KEYS_PER_READ) }, b: owners })).deletedCount;
      }
      await packs.deleteOne({ _id: id });
      return deleted;
    },

    /**
     * Rewrites the listed groups of one project and minute as parts, then deletes the groups' documents that a
     * committed part holds; returns how many. Parts are only inserted, never replaced, and part 0 last: a run
     * killed on the way, or two at once, leave every attempt in its group's document or in a part its minute's
     * part 0 points to. A group left out (its document read after the minute was committed, or placed by another
     * run's split) keeps its document.
     */
    async repack(project: number, bucket: number, groups: string[], paced: Pace = makePace()): Promise<number> {
      const head = partId(project, bucket, 0);
      let first = await packs.findOne({ _id: head });
      if (!first) {
        await writeParts(project, bucket, [...new Set(groups)].sort(), paced);
        first = await packs.findOne({ _id: head });
        if (!first) return 0; // no group had a document
      }
      // What the committed minute holds, group by group, as its part 0 points to it.
      const rest = first.parts?.length ? await packs.find({ _id: { $in: first.parts.map((_, i) => partId(project, bucket, i + 1)) } }).toArray() : [];
      const held = [first, ...rest].flatMap((part) => [...new Set(contents(part).groups)].filter((group) => partId(project, bucket, partIndex(first.parts, group)) === part._id));
      let deleted = 0;
      for (let i = 0; i < held.length; i += DELETES_PER_CALL) {
        const ids = held.slice(i, i + DELETES_PER_CALL).map((group) => `${group}:${project}`);
        deleted += (await paced(ids.length, () => packs.deleteMany({ _id: { $in: ids } }))).deletedCount;
      }
      return deleted;
    },
  };

  /** The groups' documents (ids sorted) as parts of about `PART_ATTEMPTS`: the further parts first, then part 0 with where each begins. */
  async function writeParts(project: number, bucket: number, sorted: string[], paced: Pace): Promise<void> {
    const parts: { doc: AttemptsDoc; first: string }[] = [];
    let part: { groups: string[]; sizes: number[]; bodies: AttemptBody[]; received: number; at: number } | null = null;
    const close = async () => {
      if (!part) return;
      const doc: AttemptsDoc = {
        _id: partId(project, bucket, parts.length),
        project_id: project,
        batch: partId(project, bucket, parts.length),
        received_at: new Date(part.received),
        at_max: new Date(part.at),
        count: part.bodies.length,
        packed: packJson({ groups: part.groups, sizes: part.sizes, events: part.bodies } satisfies PartContents, 'small'),
      };
      parts.push({ doc, first: part.groups[0]! });
      part = null;
      if (parts.length > 1) await paced(0, () => insertOnce(packs, doc));
    };
    for (let i = 0; i < sorted.length; i += GROUPS_PER_READ) {
      const ids = sorted.slice(i, i + GROUPS_PER_READ).map((group) => `${group}:${project}`);
      const docs = await paced(ids.length, () => packs.find({ _id: { $in: ids } }).toArray());
      docs.sort((a, b) => (a.batch < b.batch ? -1 : 1));
      for (const doc of docs) {
        part ??= { groups: [], sizes: [], bodies: [], received: 0, at: 0 };
        const { bodies } = contents(doc);
        part.groups.push(doc.batch);
        part.sizes.push(bodies.length);
        part.bodies.push(...bodies);
        part.received = Math.max(part.received, doc.received_at.getTime());
        part.at = Math.max(part.at, doc.at_max.getTime());
        if (part.bodies.length >= PART_ATTEMPTS) await close();
      }
    }
    await close();
    if (parts.length > 0) await insertOnce(packs, { ...parts[0]!.doc, parts: parts.slice(1).map((p) => p.first) });
  }
}
export type AttemptsStore = ReturnType<typeof makeAttemptsStore>;
