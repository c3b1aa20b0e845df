/**
 * API tokens of dashboard users. `_id` is the SHA-256 of the token, so a
 * request's token is found through the `_id` index and the token itself is
 * never stored; `id` is the short public name a token is listed and revoked by.
 */
import type { Db } from 'mongodb';

export const TOKEN_SCOPES = ['project:read', 'project:write', 'project:releases', 'org:read'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

export interface TokenDoc {
  _id: string;
  id: string;
  org_id: number;
  email: string;
  name: string;
  scopes: TokenScope[];
  /** the token's first characters, to tell tokens apart in a list */
  hint: string;
  created_at: Date;
  last_used_at: Date | null;
}

/** How stale a token's last use may be before a request records it again (one write a minute at most). */
const LAST_USE_STEP_MS = 60_000;

export function makeTokensStore(db: Db) {
  const tokens = db.collection<TokenDoc>('api_tokens');
  return {
    async create(doc: TokenDoc): Promise<void> {
      await tokens.insertOne(doc);
    },
    byHash(hash: string): Promise<TokenDoc | null> {
      return tokens.findOne({ _id: hash });
    },
    /** A user's tokens, newest first (a rare read by a secondary field). */
    async ofUser(email: string): Promise<TokenDoc[]> {
      return tokens.find({ email }).sort({ created_at: -1 }).toArray();
    },
    async revoke(email: string, id: string): Promise<boolean> {
      return (await tokens.deleteOne({ id, email })).deletedCount === 1;
    },
    async revokeAllOf(email: string): Promise<number> {
      return (await tokens.deleteMany({ email })).deletedCount;
    },
    /** Notes a use, unless one was noted within the last minute. */
    async used(hash: string, at: Date): Promise<void> {
      await tokens.updateOne(
        { _id: hash, $or: [{ last_used_at: null }, { last_used_at: { $lt: new Date(at.getTime() - LAST_USE_STEP_MS) } }] },
        { $set: { last_used_at: at } },
      );
    },
  };
}
export type TokensStore = ReturnType<typeof makeTokensStore>;
