/**
 * Single sign-on through OpenID Connect, one identity provider per
 * organisation: the authorization-code flow with PKCE, `state` and `nonce`,
 * the ID token's signature and claims verified by openid-client (a certified
 * relying party). A person whose verified email is in one of the
 * organisation's domains signs in, and joins it on first sign-in with the
 * default role. The issuer is an outbound target under the same guard as
 * webhooks (SSO_ALLOW_PRIVATE lets it be inward, and plain http there).
 */
import * as oidc from 'openid-client';
import type { Logger } from '../log.ts';
import { checkedFetch, checkUrlForm, TargetRefused } from '../notify/outbound.ts';
import type { RedisClient } from '../redis/connect.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../errors.ts';
import type { Stores } from '../store/index.ts';
import type { SsoSettings } from '../store/orgs.store.ts';
import type { Role } from '../store/users.store.ts';
import type { SealedBox } from '../crypto/sealed.ts';
import type { AccountsService } from './accounts.service.ts';
import { sha256, type SessionOrigin } from '../state/web-sessions.ts';

/** How long a sign-in may take at the provider. */
export const SSO_PENDING_SECONDS = 600;
/** How long a provider's discovered configuration (endpoints, keys) is reused. */
const DISCOVERY_CACHE_MS = 10 * 60_000;

export interface SsoInput {
  issuer: string;
  client_id: string;
  client_secret?: string;
  domains: string[];
  default_role: Role;
  required: boolean;
}

interface Pending {
  org: number;
  verifier: string;
  nonce: string;
}

const ssoFailed = (message: string) => new BadRequestError('sso_failed', `single sign-on failed: ${message}`);

/** What went wrong, from openid-client's error and its causes: an outbound refusal names its rule. */
function why(err: unknown): string {
  const messages: string[] = [];
  for (let e = err as { message?: string; cause?: unknown; error?: unknown; error_description?: unknown } | undefined; e && messages.length < 4; e = e.cause as typeof e) {
    if (e instanceof TargetRefused) return `refused (${e.rule}): ${e.message}`;
    if (e.message) messages.push(e.message);
    // the provider's own OAuth error (invalid_grant: a code used twice, …)
    if (typeof e.error === 'string') messages.push([e.error, e.error_description].filter((x) => typeof x === 'string').join(': '));
  }
  return messages.join(': ') || String(err);
}

export function makeSsoService(deps: {
  stores: Stores;
  redis: RedisClient;
  prefix: string;
  box: SealedBox;
  accounts: AccountsService;
  allowPrivate: boolean;
  log: Logger;
}) {
  const { stores, redis, box, accounts } = deps;
  const fetcher = checkedFetch(deps.allowPrivate, 'SSO_ALLOW_PRIVATE');
  const discovered = new Map<string, { at: number; config: Promise<oidc.Configuration> }>();
  const pendingKey = (state: string) => `${deps.prefix}:sso:${sha256(state)}`;

  /** The provider's configuration for these settings, discovered once per ten minutes. */
  function clientOf(sso: Pick<SsoSettings, 'issuer' | 'client_id' | 'client_secret'>, now = Date.now()): Promise<oidc.Configuration> {
    const cacheKey = sha256(JSON.stringify([sso.issuer, sso.client_id, sso.client_secret]));
    const cached = discovered.get(cacheKey);
    if (cached && now - cached.at < DISCOVERY_CACHE_MS) return cached.config;
    const insecure = new URL(sso.issuer).protocol === 'http:';
    const config = oidc.discovery(new URL(sso.issuer), sso.client_id, undefined, oidc.ClientSecretPost(box.open(sso.client_secret)), {
      [oidc.customFetch]: fetcher as oidc.CustomFetch,
      execute: insecure ? [oidc.allowInsecureRequests] : [],
    });
    discovered.set(cacheKey, { at: now, config });
    config.catch(() => discovered.delete(cacheKey));
    return config;
  }

  /** An issuer's address: https, or http only where inward issuers are allowed (a test or lab provider). */
  function issuerUrl(text: string): string {
    let url: URL;
    try {
      url = checkUrlForm(text);
    } catch (err) {
      throw new BadRequestError('invalid_issuer', (err as Error).message);
    }
    if (url.protocol !== 'https:' && !deps.allowPrivate) throw new BadRequestError('invalid_issuer', 'an issuer is reached over https (http only with SSO_ALLOW_PRIVATE=true)');
    return url.href.replace(/\/$/, '');
  }

  const view = (sso: SsoSettings) => ({ issuer: sso.issuer, client_id: sso.client_id, domains: sso.domains, default_role: sso.default_role, required: sso.required });

  return {
    async settings(org: number) {
      const sso = (await stores.orgs.get(org))?.sso;
      return { sso: sso ? view(sso) : null };
    },

    /**
     * Sets the organisation's provider; the issuer is discovered first, so a wrong address or client is refused now
     * rather than at the first sign-in. A missing client secret keeps the stored one.
     */
    async configure(org: number, input: SsoInput) {
      const current = (await stores.orgs.get(org))?.sso;
      const secret = input.client_secret ? box.seal(input.client_secret) : current?.client_secret;
      if (!secret) throw new BadRequestError('invalid_body', 'client_secret is needed the first time');
      const domains = [...new Set(input.domains.map((d) => d.trim().toLowerCase().replace(/^@/, '')))];
      for (const domain of domains) {
        const other = await stores.orgs.byDomain(domain);
        if (other && other._id !== org) throw new BadRequestError('domain_taken', `${domain} signs in to another organisation`);
      }
      const sso: SsoSettings = { issuer: issuerUrl(input.issuer), client_id: input.client_id, client_secret: secret, domains, default_role: input.default_role, required: input.required };
      try {
        await clientOf(sso);
      } catch (err) {
        throw new BadRequestError('sso_discovery_failed', `could not read ${sso.issuer}/.well-known/openid-configuration: ${why(err)}`);
      }
      await stores.orgs.update(org, { sso });
      return { sso: view(sso) };
    },

    async remove(org: number) {
      await stores.orgs.update(org, { sso: null });
      return { sso: null };
    },

    /** Starts a sign-in for an email's domain: where to send the browser, and the state its cookie keeps. */
    async start(email: string, redirectUri: string): Promise<{ url: string; state: string }> {
      const domain = email.trim().toLowerCase().split('@').pop() ?? '';
      const org = domain ? await stores.orgs.byDomain(domain) : null;
      if (!org?.sso) throw new NotFoundError('sso_not_configured', `no organisation signs in ${domain || 'this address'} through single sign-on`);
      const config = await clientOf(org.sso).catch((err: unknown) => {
        throw ssoFailed(`the identity provider cannot be reached (${why(err)})`);
      });
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const pending: Pending = { org: org._id, verifier, nonce };
      await redis.set(pendingKey(state), JSON.stringify(pending), 'EX', SSO_PENDING_SECONDS);
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid email profile',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
        login_hint: email,
      });
      return { url: url.href, state };
    },

    /**
     * Completes a sign-in from the provider's redirect: the state must be the one this browser's cookie holds and
     * unused; the code is exchanged with the PKCE verifier; the ID token must be signed by the issuer, for this
     * client, with this nonce, and name a verified email in one of the organisation's domains.
     */
    async finish(callback: URL, cookieState: string | undefined, origin: Omit<SessionOrigin, 'via'>) {
      const state = callback.searchParams.get('state');
      if (!state || !cookieState || state !== cookieState) throw new BadRequestError('sso_state_mismatch', 'this sign-in was not started in this browser; start again');
      const found = await redis.getdel(pendingKey(state));
      if (!found) throw new BadRequestError('sso_state_unknown', 'this sign-in expired or was completed already; start again');
      const pending = JSON.parse(found) as Pending;
      const org = await stores.orgs.get(pending.org);
      if (!org?.sso) throw new NotFoundError('sso_not_configured', 'single sign-on was turned off for this organisation');
      const providerError = callback.searchParams.get('error');
      if (providerError) throw ssoFailed(`the identity provider answered ${providerError}: ${callback.searchParams.get('error_description') ?? ''}`.trim());
      let claims: { email?: unknown; email_verified?: unknown } | undefined;
      try {
        const config = await clientOf(org.sso);
        const tokens = await oidc.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: pending.verifier,
          expectedState: state,
          expectedNonce: pending.nonce,
          idTokenExpected: true,
        });
        const idToken = tokens.claims()!;
        // A conforming provider may keep the email for the userinfo endpoint (oidc-provider does); it must name the same subject.
        claims = (idToken.email === undefined ? await oidc.fetchUserInfo(config, tokens.access_token, idToken.sub) : idToken) as typeof claims;
      } catch (err) {
        deps.log.warn({ org: org._id, err: why(err) }, 'single sign-on refused');
        throw ssoFailed(why(err));
      }
      const email = typeof claims?.email === 'string' ? claims.email.trim().toLowerCase() : '';
      if (!email || claims?.email_verified === false) throw new ForbiddenError('sso_email_unverified', 'the identity provider gave no verified email address');
      if (!org.sso.domains.includes(email.split('@').pop()!)) {
        throw new ForbiddenError('sso_domain_not_allowed', `${email} is not in a domain this organisation lets sign in (${org.sso.domains.join(', ')})`);
      }
      let user = await stores.users.get(email);
      if (user && user.org_id !== org._id) throw new ForbiddenError('sso_other_org', `${email} belongs to another organisation`);
      if (!user) {
        // just-in-time membership: the provider vouched for an address in an allowed domain
        await accounts.addUser({ org: org._id, email, role: org.sso.default_role, source: 'sso' });
        user = await stores.users.get(email);
      }
      if (!user || user.disabled_at) throw new ForbiddenError('account_disabled', 'this account is disabled; ask an owner of your organisation');
      return accounts.openSession(user, { ...origin, via: 'sso' }, new Date(), org);
    },
  };
}
export type SsoService = ReturnType<typeof makeSsoService>;
