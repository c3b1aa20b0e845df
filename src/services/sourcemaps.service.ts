/**
 * Source map uploads as `sentry-cli` makes them (issue 52; `docs/api.md`, "Source maps"): it asks for the chunk
 * upload options, sends the artifact bundle (a zip) in gzipped chunks named by their SHA-1, then asks for the
 * bundle to be assembled, naming its chunks and projects (and, for release-based uploads, a release and dist).
 * Assembling checks the whole against its checksum, reads the manifest, and stores one bundle per project with an
 * index of its files by debug ID and by URL. A project keeps up to `projectBytes` of bundles; past it, its oldest
 * go. Once stored, the project's recent events that found no map are mapped again (the `sourcemaps.remap` job).
 */
import { shortVersion } from './sentry-views.ts';
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { unzipSync } from 'fflate';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { OrgDoc } from '../store/orgs.store.ts';
import type { Stores } from '../store/index.ts';
import { chunkKey, debugIdKey, urlKey, type BundleDoc, type BundleFile } from '../store/sourcemaps.store.ts';
import { reasonWords, stacksOf, urlCandidates, type UnmappedReason } from '../domain/sourcemaps.ts';
import type { Obj } from '../domain/obj.ts';

/** Bytes of one chunk, chunks in one request, bytes of one request: what the upload options say. */
export const CHUNK_BYTES = 8 * 1024 * 1024;
export const CHUNKS_PER_REQUEST = 64;
export const REQUEST_BYTES = 32 * 1024 * 1024;
/** Files of one bundle kept (a bundle of more is refused). */
const MAX_FILES = 10_000;

export interface AssembleInput {
  checksum: string;
  chunks: string[];
  projects: string[];
  version?: string | null;
  dist?: string | null;
}

/** Sentry's assemble states: `ok` (assembled before), `created`, `not_found` (send these chunks), `error`. */
export type AssembleAnswer = { state: 'ok' | 'created' | 'not_found' | 'error'; missingChunks: string[]; detail?: string | null };

const sha1 = (data: Buffer) => crypto.createHash('sha1').update(data).digest('hex');

/** The files a bundle's manifest lists, with their sizes in the zip. */
function manifestFiles(zip: Buffer): { bundleId: string | null; files: BundleFile[] } {
  const sizes = new Map<string, number>();
  const manifest = unzipSync(zip, {
    filter: (f) => {
      sizes.set(f.name, f.originalSize);
      return f.name === 'manifest.json';
    },
  })['manifest.json'];
  if (!manifest) throw new BadRequestError('invalid_bundle', 'the bundle has no manifest.json');
  let parsed: { files?: Record<string, { type?: string; url?: string; headers?: Record<string, string> }>; debug_id?: string };
  try {
    parsed = JSON.parse(Buffer.from(manifest).toString('utf8'));
  } catch {
    throw new BadRequestError('invalid_bundle', 'the bundle manifest is not JSON');
  }
  const entries = Object.entries(parsed.files ?? {});
  if (entries.length > MAX_FILES) throw new BadRequestError('invalid_bundle', `a bundle holds at most ${MAX_FILES} files`);
  const files = entries.flatMap(([path, f]): BundleFile[] => {
    if (!sizes.has(path) || typeof f?.url !== 'string') return [];
    // header names are case-insensitive: sentry-cli writes debug-id and sourcemap, older tools Sourcemap, SourceMap
    const headers = Object.fromEntries(Object.entries(f.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
    return [{ path, url: f.url, type: f.type ?? 'source', debug_id: headers['debug-id']?.toLowerCase() ?? null, sourcemap: headers['sourcemap'] ?? headers['x-sourcemap'] ?? null, size: sizes.get(path)! }];
  });
  return { bundleId: typeof parsed.debug_id === 'string' ? parsed.debug_id.toLowerCase() : null, files };
}

export function makeSourcemapsService(deps: {
  stores: Pick<Stores, 'sourcemaps' | 'projects' | 'orgs'>;
  limits: { projectBytes: number; bundleBytes: number };
  log: Logger;
  /** maps a project's recent events that found no map again (a job) */
  remap: (project: number) => Promise<unknown>;
}) {
  const { stores, limits, log } = deps;
  const store = stores.sourcemaps;

  /** Deletes a project's oldest bundles while it holds more than its share. */
  async function keepWithinLimit(project: number): Promise<void> {
    const held = await store.ofProject(project);
    let total = held.reduce((n, b) => n + b.size, 0);
    // the newest (the one just stored) always stays
    for (const oldest of held.slice(1).reverse()) {
      if (total <= limits.projectBytes) break;
      await store.deleteBundle(project, oldest.bundle_id);
      total -= oldest.size;
      log.warn({ project, bundle: oldest.bundle_id, bytes: oldest.size, limit: limits.projectBytes }, 'deleted the oldest source map bundle: the project holds more than SOURCEMAPS_PROJECT_MB');
    }
  }

  /** The organisation's projects a list names (slugs or ids); a name it does not have is not found. */
  async function projectsOf(org: OrgDoc, names: string[]) {
    const out = [];
    for (const name of new Set(names)) {
      const found = await stores.projects.byIdOrSlug(org._id, name);
      if (!found) throw new NotFoundError('project_not_found', `no project ${name} in organisation ${org.slug ?? org._id}`);
      out.push(found);
    }
    return out;
  }

  return {
    /** The organisation a path names (slug or id), when it is the caller's; any other is not found. */
    async organisation(segment: string, callersOrg: number): Promise<OrgDoc> {
      const org = await stores.orgs.byIdOrSlug(segment);
      if (!org || org._id !== callersOrg) throw new NotFoundError('org_not_found', `no organisation ${segment} of yours`);
      return org;
    },

    /**
     * Makes a release of the projects named (or marks it released, `releasedAt`), as `sentry-cli releases new` and
     * `finalize` ask; answered as Sentry answers a release. Its counts come from its sessions and events as before.
     */
    async release(org: OrgDoc, version: string, projectNames: string[], releasedAt: Date | null | undefined, now: Date) {
      const projects = await projectsOf(org, projectNames);
      if (projects.length === 0) throw new BadRequestError('no_projects', 'name at least one project');
      const docs = [];
      for (const p of projects) docs.push(await store.release(p._id, version, releasedAt, now));
      const released = docs.map((d) => d.released_at).find((d) => d) ?? null;
      return {
        version,
        shortVersion: shortVersion(version),
        dateCreated: docs[0]!.created_at.toISOString(),
        dateReleased: released?.toISOString() ?? null,
        projects: projects.map((p) => ({ id: String(p._id), slug: p.slug ?? String(p._id), name: p.name })),
      };
    },

    /** What `GET …/chunk-upload/` answers: where and how to send chunks, and that artifact bundles are taken. */
    uploadOptions(url: string) {
      return {
        url,
        chunkSize: CHUNK_BYTES,
        chunksPerRequest: CHUNKS_PER_REQUEST,
        maxFileSize: limits.bundleBytes,
        maxRequestSize: REQUEST_BYTES,
        concurrency: 2,
        hashAlgorithm: 'sha1',
        compression: ['gzip'],
        // recorded: sentry-cli 2.x uploads in chunks at all only when release_files is named, and then as artifact
        // bundles like 3.x (without it, 2.x falls back to the file-by-file release API Lookout does not serve)
        accept: ['release_files', 'artifact_bundles'],
      };
    },

    /** Stores the chunks of one request, each checked against the SHA-1 it is named by. */
    async addChunks(org: number, files: { name: string; data: Buffer; gzip: boolean }[], now: Date): Promise<void> {
      if (files.length > CHUNKS_PER_REQUEST) throw new BadRequestError('too_many_chunks', `at most ${CHUNKS_PER_REQUEST} chunks a request`);
      const chunks = files.map((f) => {
        let data: Buffer;
        try {
          data = f.gzip ? zlib.gunzipSync(f.data, { maxOutputLength: CHUNK_BYTES + 1 }) : f.data;
        } catch {
          throw new BadRequestError('invalid_chunk', `chunk ${f.name} is not gzip or is larger than ${CHUNK_BYTES} bytes`);
        }
        if (data.length > CHUNK_BYTES) throw new BadRequestError('chunk_too_large', `chunk ${f.name} is larger than ${CHUNK_BYTES} bytes`);
        const hash = sha1(data);
        if (hash !== f.name.toLowerCase()) throw new BadRequestError('checksum_mismatch', `chunk ${f.name} has the SHA-1 ${hash}`);
        return { sha1: hash, data };
      });
      await store.addChunks(org, chunks, now);
    },

    /**
     * Assembles a bundle from its chunks for each project named, as Sentry's assemble endpoint answers: the chunks
     * still missing (`not_found`), or the bundle stored (`created`, `ok` when every project had it).
     */
    async assemble(org: OrgDoc, input: AssembleInput, now: Date): Promise<AssembleAnswer> {
      const keys = input.chunks.map((c) => chunkKey(org._id, c));
      const missing = await store.missingChunks(keys);
      if (missing.length > 0) return { state: 'not_found', missingChunks: missing.map((k) => k.slice(k.indexOf(':') + 1)) };
      const projects = await projectsOf(org, input.projects);
      if (projects.length === 0) throw new BadRequestError('no_projects', 'name at least one project');
      const zip = (await store.chunkBytes(keys))!;
      if (zip.length > limits.bundleBytes) return { state: 'error', missingChunks: [], detail: `the bundle is larger than ${limits.bundleBytes} bytes (SOURCEMAPS_BUNDLE_MB)` };
      if (sha1(zip) !== input.checksum.toLowerCase()) return { state: 'error', missingChunks: [], detail: 'the chunks do not make up the checksum' };
      let manifest: ReturnType<typeof manifestFiles>;
      try {
        manifest = manifestFiles(zip);
      } catch (err) {
        if (err instanceof BadRequestError) return { state: 'error', missingChunks: [], detail: err.message };
        return { state: 'error', missingChunks: [], detail: 'the bundle is not a zip file' };
      }
      let created = false;
      for (const project of projects) {
        const doc: BundleDoc = {
          _id: `${project._id}:${manifest.bundleId ?? input.checksum}`,
          project_id: project._id,
          org_id: org._id,
          bundle_id: manifest.bundleId ?? input.checksum.toLowerCase(),
          checksum: input.checksum.toLowerCase(),
          chunks: keys,
          release: input.version || null,
          dist: input.dist || null,
          size: zip.length,
          files: manifest.files,
          uploaded_at: now,
        };
        if (!(await store.addBundle(doc))) continue;
        created = true;
        log.info({ project: project._id, bundle: doc.bundle_id, files: doc.files.length, bytes: doc.size, release: doc.release }, 'source map bundle stored');
        await keepWithinLimit(project._id);
        await deps.remap(project._id);
      }
      return { state: created ? 'created' : 'ok', missingChunks: [] };
    },

    /**
     * An event's frames that found no map, told when one was uploaded since (the event page's "uploaded after the
     * event"): events after it are mapped; this one is not mapped again unless it was among the latest that waited.
     */
    async uploadedSince(project: number, event: Obj): Promise<void> {
      // the frames of one file share their reason: each key is read once
      const uploaded = new Map<string, Promise<Date | null>>();
      const uploadedAt = (key: string) => {
        if (!uploaded.has(key)) uploaded.set(key, store.lookup(key).then(async (entry) => (entry && (await store.bundle(project, entry.bundle_id)))?.uploaded_at ?? null));
        return uploaded.get(key)!;
      };
      for (const stack of stacksOf(event)) {
        for (const frame of ((stack.stacktrace as Obj).frames as Obj[] | undefined) ?? []) {
          const error = (frame?.data as Obj | undefined)?.sourcemap_error as (UnmappedReason & { uploaded_after?: string; message?: string }) | undefined;
          if (!error) continue;
          const key =
            error.reason === 'debug_id_not_found'
              ? debugIdKey(project, error.debug_id, 'source_map')
              : error.reason === 'url_not_found' && error.release
                ? urlKey(project, error.release, error.dist, urlCandidates(error.url).at(-1)!)
                : null;
          const at = key && (await uploadedAt(key));
          if (!at) continue;
          error.uploaded_after = at.toISOString();
          error.message = `${error.message ?? reasonWords(error)}; a bundle with it was uploaded after the event, at ${error.uploaded_after}: later events are mapped`;
        }
      }
    },

    /** A project's bundles, newest first, with their files. */
    async list(project: number) {
      const bundles = await store.ofProject(project);
      return {
        bundles: bundles.map((b) => ({
          id: b.bundle_id,
          release: b.release,
          dist: b.dist,
          size: b.size,
          uploaded_at: b.uploaded_at.toISOString(),
          files: b.files.map((f) => ({ url: f.url, type: f.type, debug_id: f.debug_id, size: f.size })),
        })),
        total_size: bundles.reduce((n, b) => n + b.size, 0),
        limit: limits.projectBytes,
      };
    },

    /**
     * Retention: bundles uploaded longer ago than their project keeps events, then chunks no bundle uses that are
     * over an hour old (an upload never assembled, a bundle deleted).
     */
    async expire(now: Date, defaultDays: number): Promise<{ sourcemap_bundles: number; sourcemap_chunks: number }> {
      const days = new Map<number, number>();
      let bundles = 0;
      const inUse = new Set<string>();
      for (const b of await store.allBundles()) {
        if (!days.has(b.project_id)) days.set(b.project_id, (await stores.projects.get(b.project_id))?.event_retention_days ?? defaultDays);
        if (b.uploaded_at.getTime() < now.getTime() - days.get(b.project_id)! * 86_400_000 && (await store.deleteBundle(b.project_id, b.bundle_id))) bundles += 1;
        else b.chunks.forEach((c) => inUse.add(c));
      }
      const chunks = await store.deleteUnusedChunks(inUse, new Date(now.getTime() - 3_600_000));
      if (bundles + chunks > 0) log.info({ bundles, chunks }, 'retention removed source map bundles and unused chunks');
      return { sourcemap_bundles: bundles, sourcemap_chunks: chunks };
    },

    async remove(project: number, bundleId: string): Promise<{ deleted: string }> {
      if (!(await store.deleteBundle(project, bundleId))) throw new NotFoundError('bundle_not_found', `no source map bundle ${bundleId} in this project`);
      return { deleted: bundleId };
    },
  };
}
export type SourcemapsService = ReturnType<typeof makeSourcemapsService>;
