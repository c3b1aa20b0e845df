/**
 * A value per key, loaded at most once per `ttlMs` in this process: the
 * workers' view of a project's settings and channels, the API's bouncer keys,
 * so a change made in the dashboard or the CLI holds everywhere within
 * `ttlMs`. `forget()` empties it at once; a load started before it does not
 * fill it after. It holds at most MAX_ENTRIES (then starts again), since a key
 * may be anything a client sends.
 */
const MAX_ENTRIES = 10_000;

export function cachedFor<K, V>(ttlMs: number, load: (key: K) => Promise<V>): ((key: K) => Promise<V>) & { forget(): void } {
  const cache = new Map<K, { at: number; value: V }>();
  let generation = 0;
  const get = async (key: K) => {
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < ttlMs) return hit.value;
    const started = generation;
    const value = await load(key);
    if (started === generation) {
      if (cache.size >= MAX_ENTRIES) cache.clear();
      cache.set(key, { at: Date.now(), value });
    }
    return value;
  };
  return Object.assign(get, {
    forget() {
      generation += 1;
      cache.clear();
    },
  });
}
