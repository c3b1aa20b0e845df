/**
 * API tokens for people and tools: `Authorization: Bearer lkt_…` on the
 * dashboard API (and the Sentry-compatible tool routes). A token acts as its
 * user, within its scopes and never beyond the user's role; it is shown once,
 * stored as its SHA-256, and stops working the moment its user is removed or
 * disabled (the user is checked on every request) or it is revoked.
 */
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { Stores } from '../store/index.ts';
import { TOKEN_SCOPES, type TokenDoc, type TokenScope } from '../store/tokens.store.ts';
import type { AccountsService, SignedIn } from './accounts.service.ts';
import { randomToken, sha256, type WebSession } from '../state/web-sessions.ts';

const TOKEN_PREFIX = 'lkt_';
export type TokenSession = SignedIn & { scopes: TokenScope[] };

const view = (t: TokenDoc) => ({
  id: t.id,
  name: t.name,
  scopes: t.scopes,
  hint: `${t.hint}…`,
  created_at: t.created_at.toISOString(),
  last_used_at: t.last_used_at?.toISOString() ?? null,
});

export function makeApiTokensService(deps: { stores: Stores; accounts: AccountsService }) {
  const { stores, accounts } = deps;
  /** When this process last noted each token's use: a busy token costs one store write a minute, not one a request. */
  const noted = new Map<string, number>();
  const noteUse = async (hash: string, now: Date) => {
    if (now.getTime() - (noted.get(hash) ?? 0) < 60_000) return;
    if (noted.size > 10_000) noted.clear();
    noted.set(hash, now.getTime());
    await stores.tokens.used(hash, now);
  };
  return {
    /** A new token of the user, with the scopes given: the token itself is in this answer only. */
    async create(user: Pick<WebSession, 'email' | 'org'>, input: { name: string; scopes: string[] }, now = new Date()) {
      const unknown = input.scopes.filter((s) => !(TOKEN_SCOPES as readonly string[]).includes(s));
      if (unknown.length > 0 || input.scopes.length === 0) {
        throw new BadRequestError('invalid_scopes', `scopes are one or more of ${TOKEN_SCOPES.join(', ')}${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`);
      }
      const token = `${TOKEN_PREFIX}${randomToken()}`;
      const doc: TokenDoc = {
        _id: sha256(token),
        id: randomToken().slice(0, 12),
        org_id: user.org,
        email: user.email,
        name: input.name.trim().slice(0, 100) || 'token',
        scopes: [...new Set(input.scopes as TokenScope[])],
        hint: token.slice(0, 8),
        created_at: now,
        last_used_at: null,
      };
      await stores.tokens.create(doc);
      return { ...view(doc), token };
    },

    async list(email: string) {
      return (await stores.tokens.ofUser(email)).map(view);
    },

    async revoke(email: string, id: string): Promise<{ revoked: string }> {
      if (!(await stores.tokens.revoke(email, id))) throw new NotFoundError('token_not_found', `no token ${id} of yours`);
      return { revoked: id };
    },

    /** The user a bearer token acts as, with its scopes; null when the token is unknown or its user is gone. */
    async authenticate(bearer: string, now = new Date()): Promise<TokenSession | null> {
      if (!bearer.startsWith(TOKEN_PREFIX)) return null;
      const hash = sha256(bearer);
      const token = await stores.tokens.byHash(hash);
      if (!token) return null;
      const user = await accounts.activeUser(token.email, token.org_id);
      if (!user) return null;
      await noteUse(hash, now);
      // a token carries no CSRF token: it is not a cookie, so a page of another site cannot send it
      return { email: user._id, org: user.org_id, role: user.role, csrf: '', setup_2fa: await accounts.needsTwoFactor(user), scopes: token.scopes };
    },
  };
}
export type ApiTokensService = ReturnType<typeof makeApiTokensService>;
