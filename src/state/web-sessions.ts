/**
 * Dashboard sessions as server-side records in Redis. A session is a random
 * token in an HttpOnly cookie; Redis keeps only its SHA-256, under which sits
 * the record (who, the CSRF token, when and from where it was opened and last
 * seen), for 12 hours. Each user has an index of their sessions' hashes, so an
 * owner can list and end them, and offboarding ends all of them at once.
 * The hash names a session in lists: it cannot be turned back into a cookie.
 */
import crypto from 'node:crypto';
import type { RedisClient } from '../redis/connect.ts';
import type { Role } from '../store/users.store.ts';

export const SESSION_SECONDS = 12 * 3600;
/** A session's last use is written at most once a minute. */
const LAST_SEEN_STEP_MS = 60_000;

export interface WebSession {
  email: string;
  org: number;
  role: Role;
  csrf: string;
}

export interface SessionOrigin {
  ip: string;
  userAgent: string;
  via: 'password' | 'sso';
}

interface SessionRecord extends WebSession {
  created_at: string;
  last_seen: string;
  ip: string;
  user_agent: string;
  via: SessionOrigin['via'];
}

export interface SessionView {
  id: string;
  created_at: string;
  last_seen: string;
  ip: string;
  user_agent: string;
  via: SessionOrigin['via'];
  current: boolean;
}

export const sha256 = (text: string) => crypto.hash('sha256', text);
export const randomToken = () => crypto.randomBytes(32).toString('base64url');

export function makeWebSessions(redis: RedisClient, prefix: string) {
  const recordKey = (hash: string) => `${prefix}:web-session:${hash}`;
  const indexKey = (email: string) => `${prefix}:web-sessions:${sha256(email)}`;

  async function read(hash: string): Promise<SessionRecord | null> {
    const found = await redis.get(recordKey(hash));
    return found ? (JSON.parse(found) as SessionRecord) : null;
  }

  /** The live sessions of a user, pruning the index of those that expired. */
  async function hashesOf(email: string, now: Date): Promise<string[]> {
    await redis.zremrangebyscore(indexKey(email), '-inf', now.getTime());
    return redis.zrange(indexKey(email), 0, -1);
  }

  return {
    /** Opens a session; the token goes into the cookie and nowhere else. */
    async open(session: WebSession, origin: SessionOrigin, now = new Date()): Promise<string> {
      const token = randomToken();
      const hash = sha256(token);
      const at = now.toISOString();
      const record: SessionRecord = { ...session, created_at: at, last_seen: at, ip: origin.ip, user_agent: origin.userAgent.slice(0, 256), via: origin.via };
      // indexed first: a session is never live without its user's index knowing it
      await redis.zadd(indexKey(session.email), now.getTime() + SESSION_SECONDS * 1000, hash);
      await redis.pexpire(indexKey(session.email), SESSION_SECONDS * 1000);
      await redis.set(recordKey(hash), JSON.stringify(record), 'EX', SESSION_SECONDS);
      return token;
    },

    /** The record of a cookie's token, its last use noted; null when there is none. */
    async get(token: string, now = new Date()): Promise<WebSession | null> {
      const hash = sha256(token);
      const record = await read(hash);
      if (!record) return null;
      if (now.getTime() - Date.parse(record.last_seen) > LAST_SEEN_STEP_MS) {
        await redis.set(recordKey(hash), JSON.stringify({ ...record, last_seen: now.toISOString() }), 'KEEPTTL', 'XX');
      }
      return { email: record.email, org: record.org, role: record.role, csrf: record.csrf };
    },

    /** How many sessions a user has open (the index, pruned; no record is read). */
    async count(email: string, now = new Date()): Promise<number> {
      await redis.zremrangebyscore(indexKey(email), '-inf', now.getTime());
      return redis.zcard(indexKey(email));
    },

    async list(email: string, currentToken: string | null, now = new Date()): Promise<SessionView[]> {
      const current = currentToken ? sha256(currentToken) : null;
      const views: SessionView[] = [];
      for (const hash of await hashesOf(email, now)) {
        const r = await read(hash);
        if (!r || r.email !== email) continue;
        views.push({ id: hash, created_at: r.created_at, last_seen: r.last_seen, ip: r.ip, user_agent: r.user_agent, via: r.via, current: hash === current });
      }
      return views.sort((a, b) => b.last_seen.localeCompare(a.last_seen));
    },

    /** Ends one session (by its id), every session but the caller's, or every session of a user; how many ended. */
    async end(email: string, which: { id: string } | { except: string | null }, now = new Date()): Promise<number> {
      const hashes = await hashesOf(email, now);
      const keep = 'except' in which && which.except ? sha256(which.except) : null;
      const ending = 'id' in which ? hashes.filter((h) => h === which.id) : hashes.filter((h) => h !== keep);
      for (const hash of ending) {
        await redis.del(recordKey(hash));
        await redis.zrem(indexKey(email), hash);
      }
      return ending.length;
    },

    async endByToken(token: string): Promise<void> {
      const hash = sha256(token);
      const record = await read(hash);
      await redis.del(recordKey(hash));
      if (record) await redis.zrem(indexKey(record.email), hash);
    },
  };
}
export type WebSessions = ReturnType<typeof makeWebSessions>;
