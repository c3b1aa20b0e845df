/**
 * A lease in Redis: one holder at a time for a piece of work (a project's
 * rebuild, a repack run). Whoever sets its key first (SET NX PX, with a token
 * of its own) holds it until it ends it or it runs out; a holder that died
 * leaves nothing behind for longer than `ms`.
 */
import crypto from 'node:crypto';
import type { RedisClient } from '../redis/connect.ts';
import { defineScripts } from './scripts.ts';

export interface Lease {
  /** Runs the lease out `ms` from now, if still held (a long holder calls it before it lapses); whether it was. */
  renew(ms: number): Promise<boolean>;
  /** Ends the lease, if still held: one that ran out and was taken by another is left alone (end-lease-1.lua). */
  end(): Promise<void>;
}

/** The lease on `key` for `ms`, or null while another holds it. */
export async function takeLease(redis: RedisClient, key: string, ms: number): Promise<Lease | null> {
  const token = crypto.randomUUID();
  if ((await redis.set(key, token, 'PX', ms, 'NX')) !== 'OK') return null;
  return {
    async renew(next) {
      // compare and extend in one step: a lease that lapsed and was taken by another keeps its holder's expiry
      return (await defineScripts(redis).renewLease(key, token, next)) === 1;
    },
    async end() {
      await defineScripts(redis).endLease(key, token);
    },
  };
}
