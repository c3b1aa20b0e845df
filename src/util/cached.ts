/**
 * A value per key, loaded at most once per `ttlMs` in this process: the
 * workers' view of a project's settings and channels, so a change made in
 * the dashboard or the CLI holds everywhere within `ttlMs`.
 */
export function cachedFor<K, V>(ttlMs: number, load: (key: K) => Promise<V>): (key: K) => Promise<V> {
  const cache = new Map<K, { at: number; value: V }>();
  return async (key) => {
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < ttlMs) return hit.value;
    const value = await load(key);
    cache.set(key, { at: Date.now(), value });
    return value;
  };
}
