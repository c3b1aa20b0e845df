/**
 * Turns an X-Service-Key value into its project. Bound projects are cached
 * for a few seconds per process (KEY_CACHE_SECONDS) so the ingestion hot path
 * does not read MongoDB per request: one lookup per key at a time, renewed in
 * the background before it expires, so a busy key never sends a stampede of
 * reads to the store. Unbound ones are never cached, so an
 * activation is seen at once by every process, and an admin change (key,
 * binding, flags, alerts) empties every process' cache at once
 * (src/state/project-changes.ts).
 */
import type { ProjectDoc, ProjectsStore } from '../store/projects.store.ts';
import { hashSecret, sameHash } from '../crypto/keys.ts';

export type KeyKind = 'secret' | 'public';
export interface ResolvedKey {
  kind: KeyKind;
  project: ProjectDoc;
}

export function makeKeyResolver(projects: ProjectsStore, cacheSeconds: number) {
  const cache = new Map<string, { value: ResolvedKey | null; until: number; refreshAt: number }>();
  /** Lookups under way, by cache key: requests arriving meanwhile wait for the same one instead of reading again. */
  const inFlight = new Map<string, Promise<ResolvedKey | null>>();
  /** Bumped by forget(): a lookup started before an admin change must not fill the cache after it. */
  let generation = 0;
  const MAX_ENTRIES = 10_000;

  async function lookup(hash: string, key: string): Promise<ResolvedKey | null> {
    const bySecret = await projects.bySecretHash(hash);
    if (bySecret && sameHash(bySecret.secret_hash, hash)) return { kind: 'secret', project: bySecret };
    const byPublic = /^[0-9a-f]{32}$/.test(key) ? await projects.byPublicKey(key) : null;
    return byPublic ? { kind: 'public', project: byPublic } : null;
  }

  /** One lookup per key at a time; its result is cached if the project is bound and nothing changed meanwhile. */
  function load(hash: string, key: string): Promise<ResolvedKey | null> {
    const running = inFlight.get(hash);
    if (running) return running;
    const started = generation;
    const loading = lookup(hash, key)
      .then((value) => {
        if (started === generation && cacheSeconds > 0 && value && value.project.instance_id !== null) {
          if (cache.size >= MAX_ENTRIES) cache.clear();
          const now = Date.now();
          cache.set(hash, { value, until: now + cacheSeconds * 1000, refreshAt: now + cacheSeconds * 500 });
        }
        return value;
      })
      .finally(() => {
        if (inFlight.get(hash) === loading) inFlight.delete(hash);
      });
    inFlight.set(hash, loading);
    return loading;
  }

  return {
    async resolve(key: string): Promise<ResolvedKey | null> {
      // Keyed by the hash, so that no raw key is kept in memory longer than the request.
      const hash = hashSecret(key);
      const now = Date.now();
      const hit = cache.get(hash);
      if (hit && hit.until > now) {
        // Past half its life an entry is read again in the background, so a busy key never waits for the store.
        if (hit.refreshAt <= now) load(hash, key).catch(() => undefined);
        return hit.value;
      }
      return load(hash, key);
    },
    /** The key's project when this process has it cached (no lookup); undefined when it has not. */
    cached(key: string): ResolvedKey | null | undefined {
      const hit = cache.get(hashSecret(key));
      return hit && hit.until > Date.now() ? hit.value : undefined;
    },
    forget(): void {
      generation += 1;
      cache.clear();
      inFlight.clear();
    },
  };
}
export type KeyResolver = ReturnType<typeof makeKeyResolver>;
