/** Spec 5: which credential an endpoint takes, and the instance rule. */
import type { Context, Middleware } from 'koa';
import { checkInstance } from '../../domain/binding.ts';
import { keyFromSentryAuth } from '../../domain/envelope.ts';
import { ForbiddenError, UnauthorizedError } from '../../errors.ts';
import type { KeyKind, KeyResolver, ResolvedKey } from '../key-resolver.ts';
import type { AppState } from '../state.ts';

/** What a key is read from: a Koa context, or a raw request made to look like one (src/http/admission-gate.ts). */
export type KeyCarrier = Pick<Context, 'get' | 'query'>;
const queryValue = (ctx: KeyCarrier, name: string) => (typeof ctx.query[name] === 'string' ? (ctx.query[name] as string) : undefined);

/** A native endpoint's key: `X-Service-Key`, or `?key=` (beacons). */
export const serviceKey = (ctx: KeyCarrier): string | undefined => ctx.get('x-service-key') || queryValue(ctx, 'key') || undefined;

/** A Sentry endpoint's public key from the request line and headers: `X-Sentry-Auth`, `Authorization: Sentry …`, `?sentry_key=`. */
export const sentryKey = (ctx: KeyCarrier): string | undefined =>
  keyFromSentryAuth(ctx.get('x-sentry-auth')) ?? keyFromSentryAuth(ctx.get('authorization')) ?? queryValue(ctx, 'sentry_key');

export async function authenticate(resolver: KeyResolver, key: string | undefined, wanted: KeyKind): Promise<ResolvedKey> {
  if (!key) throw new UnauthorizedError('missing_key', 'send the project key in the X-Service-Key header');
  const resolved = await resolver.resolve(key);
  if (!resolved) throw new UnauthorizedError('unknown_key', 'the key is not known');
  if (resolved.kind !== wanted) {
    throw wanted === 'secret'
      ? new ForbiddenError('secret_key_required', 'this endpoint takes the project secret key, not the public key')
      : new ForbiddenError('public_key_required', 'this endpoint takes the project public key; never send the secret key from a client');
  }
  return resolved;
}

/**
 * Secret-key endpoints. Once the project is bound to an installation every
 * request must carry that installation's X-Service-Instance.
 */
export function requireSecretKey(resolver: KeyResolver, opts: { instance: boolean }): Middleware<AppState> {
  return async (ctx, next) => {
    const { project } = await authenticate(resolver, ctx.get('x-service-key') || undefined, 'secret');
    if (opts.instance) {
      const check = checkInstance(project.instance_id, ctx.get('x-service-instance') || undefined);
      if (check === 'missing') {
        throw new ForbiddenError('instance_required', 'this key is bound to an installation: send its X-Service-Instance header');
      }
      if (check === 'mismatch') {
        throw new ForbiddenError('instance_mismatch', 'this key is bound to a different instance');
      }
      if (project.instance_id) ctx.state.installation = project.instance_id;
    }
    ctx.state.project = project;
    await next();
  };
}
