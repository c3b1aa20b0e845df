/**
 * Source maps and the files beside them, as `sentry-cli` uploads them (issue 52): chunks of an artifact bundle (a zip
 * of files and a manifest) stored once per organisation by their SHA-1, the bundles assembled from them per project,
 * and an index from what an event names (a debug ID, or a release's URL) to the file in its bundle.
 *
 * Every read is by `_id`: a chunk `<org>:<sha1>`, a bundle `<project>:<bundle id>`, an index entry
 * `<project>:d:<debug id>:<type>` or `<project>:u:<release>\n<dist>\n<url>`. A newer bundle's entry replaces an
 * older one's; deleting a bundle deletes the entries that still point at it.
 */
import { Binary, type Db, type IndexDescription } from 'mongodb';
import { ensureIndexes, isDuplicateKey, onlyDuplicates } from './mongo.ts';

export interface ChunkDoc {
  /** `<org>:<sha1>` */
  _id: string;
  org_id: number;
  data: Binary;
  size: number;
  created_at: Date;
}

/** A file of a bundle, as its manifest describes it. */
export interface BundleFile {
  /** its path inside the zip */
  path: string;
  /** the URL it is served from, usually `~/…` */
  url: string;
  /** `minified_source`, `source_map`, `source`, … */
  type: string;
  debug_id: string | null;
  /** the `Sourcemap` header a minified file was uploaded with (its map's URL, relative to its own) */
  sourcemap: string | null;
  size: number;
}

export interface BundleDoc {
  /** `<project>:<bundle id>` */
  _id: string;
  project_id: number;
  org_id: number;
  bundle_id: string;
  /** SHA-1 of the whole zip */
  checksum: string;
  /** the zip's chunks in order, each `<org>:<sha1>` of the chunks collection */
  chunks: string[];
  release: string | null;
  dist: string | null;
  /** bytes of the zip */
  size: number;
  files: BundleFile[];
  uploaded_at: Date;
}

/** Where an index entry points: a file of a bundle. */
export interface IndexDoc {
  _id: string;
  project_id: number;
  bundle_id: string;
  path: string;
}

/** A release a tool made (`sentry-cli releases new`) or finalized, per project. */
export interface ToolReleaseDoc {
  /** `<project>:<version>` */
  _id: string;
  project_id: number;
  version: string;
  created_at: Date;
  released_at: Date | null;
}

export const bundleIndexes: IndexDescription[] = [{ key: { project_id: 1, uploaded_at: -1 }, name: 'project_uploaded' }];

export const debugIdKey = (project: number, debugId: string, type: string) => `${project}:d:${debugId.toLowerCase()}:${type}`;
export const urlKey = (project: number, release: string, dist: string | null, url: string) => `${project}:u:${release}\n${dist ?? ''}\n${url}`;
export const chunkKey = (org: number, sha1: string) => `${org}:${sha1.toLowerCase()}`;

/** The index entries of a bundle's files: by debug ID and type, and by URL when it has a release. */
export function indexEntries(bundle: BundleDoc): IndexDoc[] {
  return bundle.files.flatMap((f) => {
    const to = { project_id: bundle.project_id, bundle_id: bundle.bundle_id, path: f.path };
    return [
      ...(f.debug_id ? [{ _id: debugIdKey(bundle.project_id, f.debug_id, f.type), ...to }] : []),
      ...(bundle.release ? [{ _id: urlKey(bundle.project_id, bundle.release, bundle.dist, f.url), ...to }] : []),
    ];
  });
}

export function makeSourcemapsStore(db: Db) {
  const chunks = db.collection<ChunkDoc>('upload_chunks');
  const bundles = db.collection<BundleDoc>('artifact_bundles');
  const index = db.collection<IndexDoc>('sourcemap_index');
  const releases = db.collection<ToolReleaseDoc>('tool_releases');
  return {
    async ensureIndexes() {
      await ensureIndexes(bundles, bundleIndexes);
    },

    /** Which of the chunks (`<org>:<sha1>`) are not stored. */
    async missingChunks(ids: string[]): Promise<string[]> {
      const held = new Set((await chunks.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray()).map((c) => c._id));
      return ids.filter((id) => !held.has(id));
    },
    /** Stores an organisation's chunks by their SHA-1; one stored before (the same bytes) stays. */
    async addChunks(org: number, items: { sha1: string; data: Buffer }[], now: Date): Promise<void> {
      if (items.length === 0) return;
      const docs = items.map((c): ChunkDoc => ({ _id: chunkKey(org, c.sha1), org_id: org, data: new Binary(c.data), size: c.data.length, created_at: now }));
      try {
        await chunks.insertMany(docs, { ordered: false });
      } catch (err) {
        if (!onlyDuplicates(err)) throw err;
      }
    },
    /** The bytes of chunks, in the order asked; null when one is missing. */
    async chunkBytes(ids: string[]): Promise<Buffer | null> {
      const docs = new Map((await chunks.find({ _id: { $in: [...new Set(ids)] } }).toArray()).map((c) => [c._id, c.data.buffer]));
      if (ids.some((id) => !docs.has(id))) return null;
      return Buffer.concat(ids.map((id) => Buffer.from(docs.get(id)!)));
    },

    /** Stores a bundle and points the index at its files; false when the project has it already. */
    async addBundle(doc: BundleDoc): Promise<boolean> {
      try {
        await bundles.insertOne(doc);
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        return false;
      }
      const entries = indexEntries(doc);
      if (entries.length > 0) await index.bulkWrite(entries.map((e) => ({ replaceOne: { filter: { _id: e._id }, replacement: e, upsert: true } })), { ordered: false });
      return true;
    },
    bundle(project: number, bundleId: string): Promise<BundleDoc | null> {
      return bundles.findOne({ _id: `${project}:${bundleId}` });
    },
    /** A project's bundles, newest first, without their chunk lists. */
    ofProject(project: number): Promise<Omit<BundleDoc, 'chunks'>[]> {
      return bundles.find({ project_id: project }, { projection: { chunks: 0 } }).sort({ uploaded_at: -1 }).toArray();
    },
    /** Deletes a bundle and the index entries that still point at it; false when there was none. */
    async deleteBundle(project: number, bundleId: string): Promise<boolean> {
      const doc = await bundles.findOne({ _id: `${project}:${bundleId}` });
      if (!doc) return false;
      const keys = indexEntries(doc).map((e) => e._id);
      if (keys.length > 0) await index.deleteMany({ _id: { $in: keys }, bundle_id: bundleId });
      return (await bundles.deleteOne({ _id: doc._id })).deletedCount === 1;
    },
    /** The file an index key points at, or null. */
    lookup(key: string): Promise<IndexDoc | null> {
      return index.findOne({ _id: key });
    },
    /** Makes a project's release once, or marks it released; answers it as it is now. */
    async release(project: number, version: string, releasedAt: Date | null | undefined, now: Date): Promise<ToolReleaseDoc> {
      const set = releasedAt === undefined ? {} : { released_at: releasedAt };
      const doc = await releases.findOneAndUpdate(
        { _id: `${project}:${version}` },
        { $setOnInsert: { project_id: project, version, created_at: now, ...(releasedAt === undefined && { released_at: null }) }, ...(releasedAt !== undefined && { $set: set }) },
        { upsert: true, returnDocument: 'after' },
      );
      return doc!;
    },
    /** The releases tools made of a project (a scan: there are few). */
    releasesOf(project: number): Promise<ToolReleaseDoc[]> {
      return releases.find({ project_id: project }).toArray();
    },
    /** Every bundle's chunks and age: what retention needs to keep chunks in use. */
    allBundles(): Promise<Pick<BundleDoc, '_id' | 'project_id' | 'bundle_id' | 'chunks' | 'size' | 'uploaded_at'>[]> {
      return bundles.find({}, { projection: { _id: 1, project_id: 1, bundle_id: 1, chunks: 1, size: 1, uploaded_at: 1 } }).toArray();
    },
    /** Chunks stored before `before` that no bundle uses (an upload never assembled, or a bundle deleted). */
    async deleteUnusedChunks(inUse: Set<string>, before: Date): Promise<number> {
      const old = (await chunks.find({ created_at: { $lt: before } }, { projection: { _id: 1 } }).toArray()).map((c) => c._id).filter((id) => !inUse.has(id));
      if (old.length === 0) return 0;
      return (await chunks.deleteMany({ _id: { $in: old } })).deletedCount;
    },
  };
}
export type SourcemapsStore = ReturnType<typeof makeSourcemapsStore>;
