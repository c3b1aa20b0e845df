/**
 * Dashboard accounts: users of an organisation (owner or member), their
 * sign-in and their sessions. A session is a random token in an HttpOnly
 * cookie; Redis keeps only its SHA-256 with the user, the role and the
 * session's CSRF token, for 12 hours, and sign-out deletes it. Failed
 * sign-ins are throttled per account and per address, a failure reserved
 * before the password is checked, so concurrency cannot beat the limit.
 */
import crypto from 'node:crypto';
import type { RedisClient } from '../redis/connect.ts';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError, BadRequestError, ConflictError, NotFoundError, UnauthorizedError } from '../errors.ts';
import { isDuplicateKey } from '../store/mongo.ts';
import type { Stores } from '../store/index.ts';
import type { Role } from '../store/users.store.ts';
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from './passwords.ts';

export const SESSION_SECONDS = 12 * 3600;
const SETUP_SECONDS = 24 * 3600;
/** Failed sign-ins allowed per 15 minutes: per account, and per address (an address may serve many people). */
const FAILURES_PER_ACCOUNT = 5;
const FAILURES_PER_ADDRESS = 20;
const THROTTLE_SECONDS = 15 * 60;

export interface WebSession {
  email: string;
  org: number;
  role: Role;
  csrf: string;
}

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');
const token = () => crypto.randomBytes(32).toString('base64url');

export class SignInThrottledError extends AppError {
  constructor(retryAfterSeconds: number) {
    super(429, 'sign_in_throttled', `too many failed sign-ins; try again in ${retryAfterSeconds} s`, { retry_after: retryAfterSeconds }, {
      'Retry-After': String(retryAfterSeconds),
    });
  }
}

/** An email address as stored (trimmed, lower-cased), or a 400 when it is not one. */
export function normalEmail(email: string): string {
  const normal = email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+$/.test(normal) || normal.length > 320) throw new BadRequestError('invalid_email', `not an email address: ${email}`);
  return normal;
}

function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new BadRequestError('weak_password', `a password needs at least ${MIN_PASSWORD_LENGTH} characters`);
}

export function makeAccountsService(deps: { stores: Stores; redis: RedisClient; prefix: string }) {
  const { stores, redis } = deps;
  const sessionKey = (sessionToken: string) => `${deps.prefix}:web-session:${sha256(sessionToken)}`;
  const limiter = (name: string, points: number) =>
    new RateLimiterRedis({ storeClient: redis, keyPrefix: `${deps.prefix}:signin:${name}`, points, duration: THROTTLE_SECONDS });
  const perAccount = limiter('account', FAILURES_PER_ACCOUNT);
  const perAddress = limiter('address', FAILURES_PER_ADDRESS);

  /**
   * Reserves one failure of each budget before the password is checked (an atomic increment in Redis, shared by
   * every API process), so a burst of simultaneous sign-ins gets no more checks than the budget: the ones past it
   * are refused with the 429 whatever their password. A sign-in that succeeds gives its reservation back.
   */
  async function reserveAttempt(email: string, ip: string): Promise<() => Promise<void>> {
    const taken = await Promise.allSettled([perAccount.consume(sha256(email)), perAddress.consume(ip)]);
    const refused = taken.flatMap((t) => (t.status === 'rejected' ? [t.reason as unknown] : []));
    for (const err of refused) if (!(err instanceof RateLimiterRes)) throw err;
    if (refused.length > 0) {
      // the budget that took the attempt gives it back: no password was checked
      await Promise.all([taken[0].status === 'fulfilled' && perAccount.reward(sha256(email), 1), taken[1].status === 'fulfilled' && perAddress.reward(ip, 1)]);
      const wait = Math.max(1, ...refused.map((r) => Math.ceil((r as RateLimiterRes).msBeforeNext / 1000)));
      throw new SignInThrottledError(wait);
    }
    return async () => {
      await Promise.all([perAccount.delete(sha256(email)), perAddress.reward(ip, 1)]);
    };
  }

  return {
    /** A new user; without a password, a one-time token to set one (valid 24 hours) is returned instead. */
    async addUser(input: { org: number; email: string; role: Role; password?: string }, now = new Date()) {
      if (!(await stores.orgs.get(input.org))) throw new NotFoundError('org_not_found', `no organisation ${input.org}`);
      const email = normalEmail(input.email);
      if (input.password !== undefined) checkPassword(input.password);
      const setup = input.password === undefined ? token() : null;
      try {
        await stores.users.create({
          _id: email,
          org_id: input.org,
          role: input.role,
          password_hash: input.password === undefined ? null : await hashPassword(input.password),
          setup_hash: setup ? sha256(setup) : null,
          setup_expires: setup ? new Date(now.getTime() + SETUP_SECONDS * 1000) : null,
          created_at: now,
        });
      } catch (err) {
        if (isDuplicateKey(err)) throw new ConflictError('user_exists', `${email} has an account already`);
        throw err;
      }
      // A dashboard user is one of the organisation's members, and fills a seat as one.
      await stores.orgs.addPerson(input.org, 'members', email);
      return { email, org: String(input.org), role: input.role, ...(setup ? { set_password_path: `/set-password#${setup}` } : {}) };
    },

    /** The organisation's dashboard users: email, role, and whether a password is set yet. */
    async listUsers(org: number) {
      return (await stores.users.ofOrg(org)).map((u) => ({ email: u._id, role: u.role, active: u.password_hash !== null }));
    },

    /** Sets a password with the one-time token from `addUser`. */
    async setPassword(setupToken: string, password: string, now = new Date()): Promise<{ email: string }> {
      checkPassword(password);
      const user = await stores.users.bySetupHash(sha256(setupToken));
      if (!user || !user.setup_expires || user.setup_expires.getTime() < now.getTime()) {
        throw new BadRequestError('invalid_token', 'this set-password link is unknown or expired; ask an owner for a new one');
      }
      await stores.users.setPassword(user._id, await hashPassword(password));
      return { email: user._id };
    },

    /** Checks the password (throttled) and opens a session: the token for the cookie, and what the page may know. */
    async signIn(emailInput: string, password: string, ip: string): Promise<{ token: string; session: WebSession }> {
      const email = emailInput.trim().toLowerCase();
      const succeeded = await reserveAttempt(email, ip);
      const user = await stores.users.get(email);
      // a failure keeps its reservation: it is counted
      if (!(await verifyPassword(password, user?.password_hash ?? null)) || !user) throw new UnauthorizedError('bad_credentials', 'the email or the password is wrong');
      await succeeded();
      const sessionToken = token();
      const session: WebSession = { email, org: user.org_id, role: user.role, csrf: token() };
      await redis.set(sessionKey(sessionToken), JSON.stringify(session), 'EX', SESSION_SECONDS);
      return { token: sessionToken, session };
    },

    /**
     * The session of a cookie's token, checked against its user on each request: a user removed since (offboarded)
     * has no session any more, whatever cookie they hold, and a changed role holds at once.
     */
    async session(sessionToken: string | undefined): Promise<WebSession | null> {
      if (!sessionToken) return null;
      const found = await redis.get(sessionKey(sessionToken));
      if (!found) return null;
      const session = JSON.parse(found) as WebSession;
      const user = await stores.users.get(session.email);
      if (!user || user.org_id !== session.org) {
        await redis.del(sessionKey(sessionToken));
        return null;
      }
      return { ...session, role: user.role };
    },

    /**
     * Offboards a user of an organisation: their account goes, and with it every session they hold (the next
     * request of each is 401) and any sign-in. Returns whether there was one.
     */
    async removeUser(org: number, emailInput: string): Promise<boolean> {
      return stores.users.remove(org, normalEmail(emailInput));
    },

    async signOut(sessionToken: string): Promise<void> {
      await redis.del(sessionKey(sessionToken));
    },
  };
}
export type AccountsService = ReturnType<typeof makeAccountsService>;
