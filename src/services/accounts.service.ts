/**
 * Dashboard accounts: users of an organisation (owner or member), their
 * sign-in (password, then a TOTP or recovery code when enrolled) and their
 * sessions (src/state/web-sessions.ts). Failed sign-ins are throttled per
 * account and per address, a failure reserved before the password is checked,
 * so concurrency cannot beat the limit. A session is checked against its user
 * on every request: removing or disabling a user ends their sessions at once.
 */
import type { RedisClient } from '../redis/connect.ts';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError, BadRequestError, ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.ts';
import { isDuplicateKey } from '../store/mongo.ts';
import type { Stores } from '../store/index.ts';
import type { OrgDoc } from '../store/orgs.store.ts';
import type { Role, UserDoc } from '../store/users.store.ts';
import type { SealedBox } from '../crypto/sealed.ts';
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from '../crypto/passwords.ts';
import { codeStep, enrolment, looksLikeRecoveryCode, newRecoveryCodes, newSeed, recoveryHash } from '../crypto/two-factor.ts';
import { makeWebSessions, randomToken, sha256, type SessionOrigin, type WebSession } from '../state/web-sessions.ts';

export { SESSION_SECONDS, type WebSession } from '../state/web-sessions.ts';

const SETUP_SECONDS = 24 * 3600;
/** Failed sign-ins allowed per 15 minutes: per account, and per address (an address may serve many people). */
const FAILURES_PER_ACCOUNT = 5;
const FAILURES_PER_ADDRESS = 20;
const THROTTLE_SECONDS = 15 * 60;
/** How long a used TOTP step is remembered: longer than the ±30 s a code is accepted. */
const USED_STEP_SECONDS = 150;

/** What a signed-in request may know of its user; `setup_2fa` while the organisation requires 2FA and it is off. */
export type SignedIn = WebSession & { setup_2fa: boolean };

export class SignInThrottledError extends AppError {
  constructor(retryAfterSeconds: number) {
    super(
      429,
      'sign_in_throttled',
      `too many failed sign-ins; try again in ${retryAfterSeconds} s`,
      { retry_after: retryAfterSeconds },
      {
        'Retry-After': String(retryAfterSeconds),
      },
    );
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

const badCredentials = () => new UnauthorizedError('bad_credentials', 'the email or the password is wrong');

export function makeAccountsService(deps: { stores: Stores; redis: RedisClient; prefix: string; box: SealedBox }) {
  const { stores, redis, box } = deps;
  const sessions = makeWebSessions(redis, deps.prefix);
  const limiter = (name: string, points: number) =>
    new RateLimiterRedis({ storeClient: redis, keyPrefix: `${deps.prefix}:signin:${name}`, points, duration: THROTTLE_SECONDS });
  const perAccount = limiter('account', FAILURES_PER_ACCOUNT);
  const perAddress = limiter('address', FAILURES_PER_ADDRESS);

  /**
   * Reserves one failure of each budget before the password is checked (an atomic increment in Redis, shared by
   * every API process), so a burst of simultaneous sign-ins gets no more checks than the budget: the ones past it
   * are refused with the 429 whatever their password. A sign-in that succeeds clears the account's failures; one
   * that only asks for the second factor gives its reservation back.
   */
  async function reserveAttempt(email: string, ip: string) {
    const account = sha256(email);
    const taken = await Promise.allSettled([perAccount.consume(account), perAddress.consume(ip)]);
    const refused = taken.flatMap((t) => (t.status === 'rejected' ? [t.reason as unknown] : []));
    for (const err of refused) if (!(err instanceof RateLimiterRes)) throw err;
    if (refused.length > 0) {
      // No password was checked, so neither budget keeps the attempt: the one that took it gives it back, and so does
      // the one that refused it (a refused consume still counted it). Otherwise a burst at one locked account would
      // use up its address's budget, and lock out everyone else signing in from that address.
      await Promise.all([perAccount.reward(account, 1), perAddress.reward(ip, 1)]);
      const wait = Math.max(1, ...refused.map((r) => Math.ceil((r as RateLimiterRes).msBeforeNext / 1000)));
      throw new SignInThrottledError(wait);
    }
    return {
      giveBack: async () => void (await Promise.all([perAccount.reward(account, 1), perAddress.reward(ip, 1)])),
      succeeded: async () => void (await Promise.all([perAccount.delete(account), perAddress.reward(ip, 1)])),
    };
  }

  /**
   * Whether a second factor is right: a TOTP code of a step not used before (each step once, across every API
   * process), or an unused recovery code, which is used up.
   */
  async function secondFactor(user: UserDoc, code: string): Promise<boolean> {
    if (!user.totp) return false;
    if (looksLikeRecoveryCode(code)) {
      const hash = recoveryHash(code);
      // the Redis claim makes two simultaneous uses of one code one use, whatever the store does with two updates
      const claimed = await redis.set(`${deps.prefix}:recovery-used:${hash}`, '1', 'EX', 24 * 3600, 'NX');
      return claimed === 'OK' && (await stores.users.takeRecoveryCode(user._id, hash));
    }
    const step = await codeStep(box.open(user.totp.seed), code.trim());
    if (step === null) return false;
    return (await redis.set(`${deps.prefix}:totp-used:${sha256(user._id)}:${step}`, '1', 'EX', USED_STEP_SECONDS, 'NX')) === 'OK';
  }

  /** The user behind a session or token, when they still may sign in to that organisation. */
  async function activeUser(email: string, org: number): Promise<UserDoc | null> {
    const user = await stores.users.get(email);
    return user && user.org_id === org && !user.disabled_at ? user : null;
  }

  /** `org`: the user's organisation when the caller has read it already. */
  async function openSession(user: UserDoc, origin: SessionOrigin, now: Date, org?: OrgDoc | null): Promise<{ token: string; session: SignedIn }> {
    const session: WebSession = { email: user._id, org: user.org_id, role: user.role, csrf: randomToken() };
    const token = await sessions.open(session, origin, now);
    await stores.users.signedIn(user._id, now);
    return { token, session: { ...session, setup_2fa: await needsTwoFactor(user, org) } };
  }

  /** Whether the organisation requires two-factor sign-in the user has not turned on (`org`: when read already). */
  async function needsTwoFactor(user: UserDoc, org?: OrgDoc | null): Promise<boolean> {
    if (user.totp) return false;
    return (org === undefined ? await stores.orgs.get(user.org_id) : org)?.require_2fa === true;
  }

  /** Ends every session of a user and revokes their API tokens. */
  async function endAccess(email: string): Promise<void> {
    await sessions.end(email, { except: null });
    await stores.tokens.revokeAllOf(email);
  }

  return {
    activeUser,
    openSession,
    needsTwoFactor,

    /** A new user; without a password, a one-time token to set one (valid 24 hours) is returned instead. */
    async addUser(input: { org: number; email: string; role: Role; password?: string; source?: UserDoc['source'] }, now = new Date()) {
      if (!(await stores.orgs.get(input.org))) throw new NotFoundError('org_not_found', `no organisation ${input.org}`);
      const email = normalEmail(input.email);
      if (input.password !== undefined) checkPassword(input.password);
      const setup = input.password === undefined && input.source !== 'sso' ? randomToken() : null;
      try {
        await stores.users.create({
          _id: email,
          org_id: input.org,
          role: input.role,
          password_hash: input.password === undefined ? null : await hashPassword(input.password),
          setup_hash: setup ? sha256(setup) : null,
          setup_expires: setup ? new Date(now.getTime() + SETUP_SECONDS * 1000) : null,
          created_at: now,
          disabled_at: null,
          last_sign_in: null,
          totp: null,
          recovery_hashes: [],
          source: input.source ?? 'password',
        });
      } catch (err) {
        if (isDuplicateKey(err)) throw new ConflictError('user_exists', `${email} has an account already`);
        throw err;
      }
      // A dashboard user is one of the organisation's members, and fills a seat as one.
      await stores.orgs.addPerson(input.org, 'members', email);
      return { email, org: String(input.org), role: input.role, ...(setup ? { set_password_path: `/set-password#${setup}` } : {}) };
    },

    /** The organisation's dashboard users: role, password set, two-factor on, disabled, last sign-in and open sessions. */
    async listUsers(org: number, now = new Date()) {
      const users = await stores.users.ofOrg(org);
      return Promise.all(
        users.map(async (u) => ({
          email: u._id,
          role: u.role,
          active: u.password_hash !== null || u.source === 'sso',
          two_factor: Boolean(u.totp),
          disabled: Boolean(u.disabled_at),
          last_sign_in: u.last_sign_in?.toISOString() ?? null,
          sessions: await sessions.count(u._id, now),
        })),
      );
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

    /** A signed-in user changes their password (the current one checked, throttled); their other sessions end. */
    async changePassword(session: WebSession, sessionToken: string, current: string, next: string, ip: string): Promise<{ ended_sessions: number }> {
      checkPassword(next);
      const attempt = await reserveAttempt(session.email, ip);
      const user = await stores.users.get(session.email);
      if (!user || !(await verifyPassword(current, user.password_hash))) throw new UnauthorizedError('bad_credentials', 'the current password is wrong');
      await attempt.succeeded();
      await stores.users.setPassword(user._id, await hashPassword(next));
      return { ended_sessions: await sessions.end(user._id, { except: sessionToken }) };
    },

    /**
     * Checks the password (throttled), then the second factor when the user has one, and opens a session: the token
     * for the cookie, and what the page may know. Without a code, a user with 2FA gets 401 `otp_required`.
     */
    async signIn(input: { email: string; password: string; otp?: string }, origin: Omit<SessionOrigin, 'via'>, now = new Date()) {
      const email = input.email.trim().toLowerCase();
      const attempt = await reserveAttempt(email, origin.ip);
      const user = await stores.users.get(email);
      // a failure keeps its reservation: it is counted
      if (!(await verifyPassword(input.password, user?.password_hash ?? null)) || !user) throw badCredentials();
      if (user.disabled_at) throw new ForbiddenError('account_disabled', 'this account is disabled; ask an owner of your organisation');
      const org = await stores.orgs.get(user.org_id);
      if (org?.sso?.required && user.role !== 'owner') {
        throw new ForbiddenError('sso_required', 'your organisation signs in through single sign-on: use "Continue with single sign-on"');
      }
      if (user.totp) {
        if (!input.otp) {
          await attempt.giveBack();
          throw new UnauthorizedError('otp_required', 'enter the six-digit code of your authenticator app, or a recovery code');
        }
        if (!(await secondFactor(user, input.otp))) throw new UnauthorizedError('bad_otp', 'the code is wrong, or was used already');
      }
      await attempt.succeeded();
      return openSession(user, { ...origin, via: 'password' }, now, org);
    },

    /**
     * The session of a cookie's token, checked against its user on each request: a user removed or disabled since
     * (offboarded) has no session any more, whatever cookie they hold, and a changed role holds at once.
     */
    async session(sessionToken: string | undefined, now = new Date()): Promise<SignedIn | null> {
      if (!sessionToken) return null;
      const session = await sessions.get(sessionToken, now);
      if (!session) return null;
      const user = await activeUser(session.email, session.org);
      if (!user) {
        await sessions.endByToken(sessionToken);
        return null;
      }
      return { ...session, role: user.role, setup_2fa: await needsTwoFactor(user) };
    },

    listSessions: (email: string, currentToken: string | null) => sessions.list(email, currentToken),
    /** Ends one session of a user by its id, or all of them but `except`. */
    endSessions: (email: string, which: { id: string } | { except: string | null }) => sessions.end(email, which),

    /** An owner's view of one user of the organisation (404 for anyone else). */
    async userOf(org: number, emailInput: string): Promise<UserDoc> {
      const user = await stores.users.get(normalEmail(emailInput));
      if (!user || user.org_id !== org) throw new NotFoundError('user_not_found', `no user ${emailInput} in this organisation`);
      return user;
    },

    /**
     * Offboards a user of an organisation: their account goes, and with it every session and API token they hold
     * (the next request of each is 401) and any sign-in. Returns whether there was one.
     */
    async removeUser(org: number, emailInput: string): Promise<boolean> {
      const email = normalEmail(emailInput);
      const removed = await stores.users.remove(org, email);
      if (removed) await endAccess(email);
      return removed;
    },

    /** Disables (sessions and tokens end, sign-in refused) or enables a user; false when there is none. */
    async setDisabled(org: number, emailInput: string, disabled: boolean, now = new Date()): Promise<boolean> {
      const email = normalEmail(emailInput);
      const found = await stores.users.setDisabled(org, email, disabled ? now : null);
      if (found && disabled) await endAccess(email);
      return found;
    },

    async signOut(sessionToken: string): Promise<void> {
      await sessions.endByToken(sessionToken);
    },

    /** Starts two-factor enrolment: a new seed, offered as an otpauth:// address and a QR code, until confirmed. */
    async startTwoFactor(email: string) {
      const seed = newSeed();
      await stores.users.offerTotp(email, box.seal(seed));
      return { secret: seed, ...(await enrolment(email, seed)) };
    },

    /** Confirms enrolment with a code of the offered seed: two-factor sign-in is on; ten recovery codes, shown once. */
    async confirmTwoFactor(email: string, code: string, now = new Date()): Promise<{ recovery_codes: string[] }> {
      const user = await stores.users.get(email);
      if (!user?.totp_pending) throw new ConflictError('no_enrolment', 'start two-factor enrolment first');
      const seed = box.open(user.totp_pending);
      if ((await codeStep(seed, code.trim())) === null)
        throw new BadRequestError('bad_otp', 'the code does not match: check the time of your device and try the next code');
      const codes = newRecoveryCodes();
      await stores.users.enableTotp(email, user.totp_pending, codes.map(recoveryHash), now);
      return { recovery_codes: codes };
    },

    /** Turns two-factor sign-in off, with a current code (or a recovery code) as proof; refused when the organisation requires it. */
    async disableTwoFactor(email: string, code: string): Promise<void> {
      const user = await stores.users.get(email);
      if (!user?.totp) throw new ConflictError('two_factor_off', 'two-factor sign-in is not on');
      if ((await stores.orgs.get(user.org_id))?.require_2fa) throw new ForbiddenError('two_factor_required', 'your organisation requires two-factor sign-in');
      if (!(await secondFactor(user, code))) throw new UnauthorizedError('bad_otp', 'the code is wrong, or was used already');
      await stores.users.disableTotp(email);
    },
  };
}
export type AccountsService = ReturnType<typeof makeAccountsService>;
