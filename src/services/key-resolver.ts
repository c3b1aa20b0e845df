/**
 * Turns an X-Service-Key value into its project. Bound projects are cached
 * for a few seconds per process (KEY_CACHE_SECONDS) so the ingestion hot path
 * does not read MongoDB per request; unbound ones are never cached, so an
 * activation is seen at once by every process, and an admin change (key,
 * binding, flags, alerts) empties every process' cache at once
 * (src/state/project-changes.ts).
 */
import type { ProjectDoc, ProjectsStore } from '../store/projects.store.ts';
import { hashSecret, sameHash } from './keys.ts';

export type KeyKind = 'secret' | 'public';
export interface ResolvedKey {
  kind: KeyKind;
  project: ProjectDoc;
}

export function makeKeyResolver(projects: ProjectsStore, cacheSeconds: number) {
  const cache = new Map<string, { value: ResolvedKey | null; until: number }>();
  const MAX_ENTRIES = 10_000;

  async function lookup(key: string): Promise<ResolvedKey | null> {
    const hash = hashSecret(key);
    const bySecret = await projects.bySecretHash(hash);
    if (bySecret && sameHash(bySecret.secret_hash, hash)) return { kind: 'secret', project: bySecret };
    const byPublic = /^[0-9a-f]{32}$/.test(key) ? await projects.byPublicKey(key) : null;
    return byPublic ? { kind: 'public', project: byPublic } : null;
  }

  return {
    async resolve(key: string): Promise<ResolvedKey | null> {
      // The cache is keyed by the hash so that no raw key is kept in memory longer than the request.
      const cacheKey = hashSecret(key);
      const now = Date.now();
      const hit = cache.get(cacheKey);
      if (hit && hit.until > now) return hit.value;
      const value = await lookup(key);
      if (cacheSeconds > 0 && value && value.project.instance_id !== null) {
        if (cache.size >= MAX_ENTRIES) cache.clear();
        cache.set(cacheKey, { value, until: now + cacheSeconds * 1000 });
      }
      return value;
    },
    forget(): void {
      cache.clear();
    },
  };
}
export type KeyResolver = ReturnType<typeof makeKeyResolver>;
