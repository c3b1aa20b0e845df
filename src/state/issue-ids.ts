/**
 * Issue ids: the fingerprint → issue map of each project, new fingerprints numbered from one counter shared by every
 * project (first writer wins), and the counter raised after a Redis restart to the highest id MongoDB holds.
 */
import type { RedisClient } from '../redis/connect.ts';
import type { ScriptCommands } from './scripts.ts';

export function makeIssueIds(redis: RedisClient & ScriptCommands, opts: { prefix: string; base: (project: number) => string }) {
  /** Issue ids come from one counter for all projects (a plain command: it is not in any project's slot). */
  const issueSeq = `${opts.prefix}:issues:seq`;
  const fpKey = (project: number) => `${opts.base(project)}fp`;
  /** The issue of each fingerprint that has one (nothing is numbered). */
  const knownIssueIds = async (project: number, fingerprints: string[]): Promise<Map<string, number>> => {
    const unique = [...new Set(fingerprints)];
    const known = unique.length === 0 ? [] : await redis.hmget(fpKey(project), ...unique);
    return new Map(unique.flatMap((f, i) => (known[i] ? [[f, Number(known[i])] as const] : [])));
  };
  return {
    knownIssueIds,
    /** The issue of each fingerprint, new ones numbered from the shared counter (first writer wins). */
    async issueIds(project: number, fingerprints: string[]): Promise<Map<string, number>> {
      const out = await knownIssueIds(project, fingerprints);
      const fp = fpKey(project);
      for (const f of new Set(fingerprints)) {
        if (out.has(f)) continue;
        const id = await redis.incr(issueSeq);
        // Two workers may number one fingerprint at once: the first mapping stays, the other id is unused.
        out.set(f, (await redis.hsetnx(fp, f, String(id))) === 1 ? id : Number(await redis.hget(fp, f)));
      }
      return out;
    },
    /** After a Redis restart: the counter never goes below the highest issue id MongoDB holds. */
    async raiseIssueSeq(atLeast: number): Promise<void> {
      await redis.raiseCounter(issueSeq, atLeast);
    },
  };
}
