/** A history of raw session batches written straight to the store, for the recount and repack tests. */
import crypto from 'node:crypto';
import type { SessionStatus } from '../../src/domain/sessions.ts';
import { packRequest, type SessionBatchDoc } from '../../src/store/sessions.store.ts';
import type { TestContext } from './context.ts';
import { prng } from './prng.ts';

const STATUSES: SessionStatus[] = ['ok', 'errored', 'abnormal', 'crashed'];

/**
 * `count` raw batches of one project, as the API stores them: sessions updated across batches, with users and
 * aggregates; batch `b` has id `id(b)` and is received at `at(b)`. Returns the sids.
 */
export async function storeRawBatches(
  ctx: TestContext,
  project: number,
  opts: { count: number; id: (b: number) => string; at: (b: number) => Date },
): Promise<string[]> {
  const rnd = prng(project);
  const now = opts.at(0).getTime();
  const sids = Array.from({ length: 2000 }, () => crypto.randomBytes(16).toString('hex'));
  const users = Array.from({ length: 300 }, () => crypto.randomBytes(8).toString('hex'));
  const docs: SessionBatchDoc[] = [];
  for (let b = 0; b < opts.count; b++) {
    const sessions = Array.from({ length: 10 }, () => {
      const i = Math.floor(rnd() * sids.length);
      return {
        sid: sids[i]!,
        release: `app@${1 + (i % 3)}`,
        environment: i % 5 === 0 ? 'staging' : 'production',
        status: STATUSES[Math.floor(rnd() * 4)]!,
        errors: Math.floor(rnd() * 2),
        did: i % 4 === 0 ? null : users[i % users.length]!,
        started: new Date(now - (i % 48) * 3600_000),
      };
    });
    const aggregates = b % 10 === 0 ? [{ release: 'app@1', environment: 'production', started: new Date(now), did: null, counts: { ok: 3, errored: 1, abnormal: 0, crashed: 1 } }] : [];
    docs.push({ _id: opts.id(b), received_at: opts.at(b), requests: [packRequest(project, sessions, aggregates)] });
  }
  await ctx.runtime.stores.sessions.insertRaw(docs);
  return sids;
}
