/**
 * The worker's side of source maps (issue 52): for each JavaScript file an event's frames name, its map (by debug ID,
 * else by URL in the event's release and dist), or why there is none; maps parsed once and kept in a cache bounded
 * by bytes. Files are read out of their bundle's zip, which is read from its chunks.
 */
import { sourceContentFor, TraceMap } from '@jridgewell/trace-mapping';
import { unzipSync } from 'fflate';
import { LRUCache } from 'lru-cache';
import { resolveUrl, scopesOf, urlCandidates, type MapRequest, type MapSource, type Scope, type UnmappedReason } from '../domain/sourcemaps.ts';
import type { BundleDoc, IndexDoc, SourcemapsStore } from '../store/sourcemaps.store.ts';
import { debugIdKey, urlKey } from '../store/sourcemaps.store.ts';

/** A map as parsed once: the map and, when its minified file was uploaded too, that file's functions. */
interface Parsed {
  map: TraceMap | null;
  error: string | null;
  scopes: Scope[] | null;
  /** each source's lines, split the first time a frame needs them */
  lines: Map<string, string[] | null>;
  bytes: number;
}

/** The last `//# sourceMappingURL=` of a minified file. */
export function sourceMappingUrl(text: string): string | null {
  const found = [...text.slice(-4096).matchAll(/\/\/[#@]\s*sourceMappingURL=(\S+)/g)].at(-1);
  return found?.[1] ?? null;
}

/** How long a worker remembers that no upload has a debug ID or URL. */
export const MISSING_TTL_MS = 5_000;

export function makeSourcemapLookup(deps: { store: SourcemapsStore; cacheBytes: number }) {
  const { store } = deps;
  const parsed = new LRUCache<string, Parsed>({ maxSize: Math.max(1, deps.cacheBytes), sizeCalculation: (p) => Math.max(1, p.bytes) });
  const bundles = new LRUCache<string, BundleDoc>({ max: 256, ttl: 60_000 });
  // What an index key pointed at, read at most once a minute (a store read per frame file would be most of an event's
  // cost); a key no upload had is asked again after a few seconds, and the remap job runs after that (runtime.ts).
  const entries = new LRUCache<string, { entry: IndexDoc | null }>({ max: 50_000, ttl: 60_000 });
  async function lookup(key: string): Promise<IndexDoc | null> {
    const cached = entries.get(key);
    if (cached) return cached.entry;
    const entry = await store.lookup(key);
    entries.set(key, { entry }, { ttl: entry ? 60_000 : MISSING_TTL_MS });
    return entry;
  }

  async function bundleOf(project: number, bundleId: string): Promise<BundleDoc | null> {
    const key = `${project}:${bundleId}`;
    const cached = bundles.get(key);
    if (cached) return cached;
    const doc = await store.bundle(project, bundleId);
    if (doc) bundles.set(key, doc);
    return doc;
  }

  /** A file of a bundle, as text; null when the bundle or the file is gone. */
  async function fileText(entry: IndexDoc): Promise<string | null> {
    const bundle = await bundleOf(entry.project_id, entry.bundle_id);
    const zip = bundle && (await store.chunkBytes(bundle.chunks));
    if (!zip) return null;
    const file = unzipSync(zip, { filter: (f) => f.name === entry.path })[entry.path];
    return file ? Buffer.from(file).toString('utf8') : null;
  }

  /** The map an entry points at, parsed (with the functions of its minified file when one is given). */
  async function parse(mapEntry: IndexDoc, minified: IndexDoc | null, inline?: string): Promise<Parsed | null> {
    const key = `${mapEntry.project_id}:${mapEntry.bundle_id}:${mapEntry.path}:${minified?.path ?? ''}`;
    const cached = parsed.get(key);
    if (cached) return cached;
    const text = inline ?? (await fileText(mapEntry));
    if (text === null) return null;
    const source = minified ? await fileText(minified) : null;
    let result: Parsed;
    try {
      result = { map: new TraceMap(text), error: null, scopes: source ? scopesOf(source) : null, lines: new Map(), bytes: text.length * 4 + (source?.length ?? 0) * 2 };
    } catch (err) {
      result = { map: null, error: (err as Error).message.slice(0, 200), scopes: null, lines: new Map(), bytes: 100 };
    }
    parsed.set(key, result);
    return result;
  }

  async function loaded(mapEntry: IndexDoc, minified: IndexDoc | null, url: string, resolvedWith: MapSource['resolvedWith'], inline?: string): Promise<MapSource | UnmappedReason> {
    const p = await parse(mapEntry, minified, inline);
    if (!p) return { reason: 'map_not_found', url, map: url };
    if (!p.map) return { reason: 'map_unreadable', map: url, error: p.error ?? 'unknown' };
    const { map, lines } = p;
    const linesOf = (source: string) => {
      if (!lines.has(source)) lines.set(source, sourceContentFor(map, source)?.split(/\r?\n/) ?? null);
      return lines.get(source)!;
    };
    return { map, url, resolvedWith, scopes: p.scopes, lines: linesOf };
  }

  /** The map of one file by its debug ID; null when no upload has it. */
  async function byDebugId(project: number, debugId: string): Promise<MapSource | UnmappedReason | null> {
    const mapEntry = await lookup(debugIdKey(project, debugId, 'source_map'));
    if (!mapEntry) return null;
    const minified = await lookup(debugIdKey(project, debugId, 'minified_source'));
    const bundle = await bundleOf(project, mapEntry.bundle_id);
    const url = bundle?.files.find((f) => f.path === mapEntry.path)?.url ?? mapEntry.path;
    return loaded(mapEntry, minified, url, 'debug-id');
  }

  /** The map of one file by its URL among the uploads of a release and dist. */
  async function byUrl(project: number, url: string, release: string, dist: string | null): Promise<MapSource | UnmappedReason> {
    let found: { entry: IndexDoc; url: string } | null = null;
    for (const candidate of urlCandidates(url)) {
      const entry = await lookup(urlKey(project, release, dist, candidate));
      if (entry) {
        found = { entry, url: candidate };
        break;
      }
    }
    if (!found) return { reason: 'url_not_found', url, release, dist };
    const bundle = await bundleOf(project, found.entry.bundle_id);
    const file = bundle?.files.find((f) => f.path === found.entry.path);
    if (file?.type === 'source_map') return loaded(found.entry, null, found.url, 'release');
    const ref = file?.sourcemap ?? sourceMappingUrl((await fileText(found.entry)) ?? '');
    if (!ref) return { reason: 'no_sourcemap_reference', url: found.url };
    const inline = /^data:application\/json[^,]*;base64,(.*)$/.exec(ref);
    if (inline) return loaded(found.entry, found.entry, found.url, 'release', Buffer.from(inline[1]!, 'base64').toString('utf8'));
    const mapUrl = resolveUrl(ref, found.url);
    const mapEntry = await lookup(urlKey(project, release, dist, mapUrl));
    if (!mapEntry) return { reason: 'map_not_found', url: found.url, map: mapUrl };
    return loaded(mapEntry, found.entry, mapUrl, 'release');
  }

  return {
    /**
     * Each requested file's map, or why it has none: by its debug ID first, then by its URL in the event's release
     * (a debug ID no upload has is the reason given when the URL finds nothing either).
     */
    async sourcesFor(project: number, release: string | null, dist: string | null, requests: MapRequest[]): Promise<Map<string, MapSource | UnmappedReason>> {
      const out = new Map<string, MapSource | UnmappedReason>();
      for (const r of requests) {
        const byId = r.debugId ? await byDebugId(project, r.debugId) : null;
        if (byId) out.set(r.url, byId);
        else if (release) {
          const found = await byUrl(project, r.url, release, dist);
          out.set(r.url, r.debugId && 'reason' in found && found.reason === 'url_not_found' ? { reason: 'debug_id_not_found', debug_id: r.debugId } : found);
        } else out.set(r.url, r.debugId ? { reason: 'debug_id_not_found', debug_id: r.debugId } : { reason: 'no_release', url: r.url });
      }
      return out;
    },
  };
}
export type SourcemapLookup = ReturnType<typeof makeSourcemapLookup>;
