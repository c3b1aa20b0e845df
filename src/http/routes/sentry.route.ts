/**
 * The endpoints Sentry's SDKs post to with a DSN `http://<public key>@<host>/<project id>` (issue 46), in every
 * form Relay reads:
 * - `POST /api/<project>/envelope/`: an envelope (src/services/sentry.service.ts reads its items);
 * - `POST /api/<project>/store/` and the project-less `POST /api/store/`: one event as JSON, gzip, deflate or br,
 *   base64 of JSON or of zlib-deflated JSON (the raven clients), or an envelope posted there; answered `{id}`.
 * - `POST /api/<project>/security/?sentry_key=`: browsers' Content-Security-Policy reports (`report-uri` and
 *   `report-to`), each violation a security issue of the `csp` kind.
 * The public key comes in `X-Sentry-Auth`, `Authorization: Sentry …`, `?sentry_key=` or the envelope header's
 * dsn. CORS for browsers; the per-key rate limit of the sessions endpoints.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { EnvelopeError, keyFromSentryAuth, looksLikeEnvelope, parseDsn, parseEnvelope, type Envelope } from '../../domain/envelope.ts';
import { BadRequestError, ForbiddenError, UnauthorizedError } from '../../errors.ts';
import type { SentryOptions } from '../../services/sentry.service.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { parseJson } from '../../util/json.ts';
import { readBytes, storeText } from '../body.ts';
import { authenticate } from '../middleware/auth.middleware.ts';
import { corsMiddleware } from '../middleware/cors.middleware.ts';

const PROJECT_ID = /^[1-9]\d{0,15}$/;

export function sentryRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api' });

  /** Authenticates the public key, checks it against the project in the path (if any) and reads the body. */
  const authenticated = (read: (ctx: Context & { state: AppState }, body: Buffer) => void) =>
    async (ctx: Context & { state: AppState; params: Record<string, string> }, next: () => Promise<unknown>) => {
      const project = ctx.params.project;
      if (project !== undefined && !PROJECT_ID.test(project)) throw new BadRequestError('invalid_project', 'the project id in the path must be a number');
      const body = await readBytes(ctx, deps.config.bodyLimitBytes);
      read(ctx, body);
      const key = keyFromSentryAuth(ctx.get('x-sentry-auth')) ?? keyFromSentryAuth(ctx.get('authorization')) ?? queryKey(ctx) ?? parseDsn(ctx.state.envelope?.header.dsn)?.key;
      if (!key) throw new UnauthorizedError('missing_key', 'send the public key in X-Sentry-Auth, ?sentry_key= or the envelope header dsn');
      const resolved = await authenticate(deps.resolver, key, 'public');
      if (project !== undefined && String(resolved.project._id) !== project) throw new ForbiddenError('project_mismatch', 'the key belongs to another project than the one in the path');
      ctx.state.project = resolved.project;
      ctx.state.envelopeKey = key;
      await next();
    };
  const options = (ctx: Context & { state: AppState }): SentryOptions => ({ now: new Date(), clientIp: ctx.ip, log: ctx.state.log });

  const envelope = '/:project/envelope/';
  router.all(envelope, corsMiddleware());
  router.post(
    envelope,
    authenticated((ctx, body) => (ctx.state.envelope = readEnvelope(body))),
    deps.rateLimit((ctx) => ctx.state.envelopeKey!),
    async (ctx) => {
      ctx.status = 200;
      ctx.body = await deps.sentry.envelope(ctx.state.project, ctx.state.envelope!, options(ctx));
    },
  );

  const storeBody = (ctx: Context & { state: AppState }, body: Buffer) => {
    const text = storeText(body, deps.config.bodyLimitBytes);
    // an envelope posted to the store endpoint is read as one, as Relay reads it
    if (isEnvelopeType(ctx) || looksLikeEnvelope(text)) ctx.state.envelope = readEnvelope(Buffer.from(text));
    else ctx.state.sentryBody = { value: parseJson(text, 'the body', false), bytes: Buffer.byteLength(text) };
  };
  const store = async (ctx: Context & { state: AppState }) => {
    const state = ctx.state;
    ctx.status = 200;
    ctx.body = state.envelope
      ? await deps.sentry.envelope(state.project, state.envelope, options(ctx))
      : await deps.sentry.store(state.project, state.sentryBody!.value, { ...options(ctx), receivedBytes: state.sentryBody!.bytes });
  };
  for (const path of ['/:project/store/', '/store/']) {
    router.all(path, corsMiddleware());
    router.post(
      path,
      authenticated((ctx, body) => storeBody(ctx, body)),
      deps.rateLimit((ctx) => ctx.state.envelopeKey!),
      store,
    );
  }

  // Browsers' CSP reports, from `report-uri` (no preflight) or `report-to` (preflighted): ?sentry_key= in the URL
  const security = '/:project/security/';
  router.all(security, corsMiddleware());
  router.post(
    security,
    authenticated((ctx, body) => (ctx.state.sentryBody = { value: parseJson(body.toString('utf8'), 'the report'), bytes: body.length })),
    deps.rateLimit((ctx) => ctx.state.envelopeKey!),
    async (ctx) => {
      ctx.status = 200;
      ctx.body = await deps.sentry.securityReport(ctx.state.project, ctx.state.sentryBody!.value, { ...options(ctx), userAgent: ctx.get('user-agent') || null });
    },
  );
  return router;
}

const queryKey = (ctx: Context) => (typeof ctx.query.sentry_key === 'string' ? ctx.query.sentry_key : undefined);
const isEnvelopeType = (ctx: Context) => (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase() === 'application/x-sentry-envelope';

function readEnvelope(body: Buffer): Envelope {
  try {
    return parseEnvelope(body);
  } catch (err) {
    if (err instanceof EnvelopeError) throw new BadRequestError('malformed_envelope', err.message);
    throw err;
  }
}
