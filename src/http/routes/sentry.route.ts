/**
 * The endpoints Sentry's SDKs post to with a DSN `http://<public key>@<host>/<project id>` (issue 46), in every
 * form Relay reads:
 * - `POST /api/<project>/envelope/`: an envelope (src/services/sentry.service.ts reads its items);
 * - `POST /api/<project>/store/` and the project-less `POST /api/store/`: one event as JSON, gzip, deflate or br,
 *   base64 of JSON or of zlib-deflated JSON (the raven clients), or an envelope posted there; answered `{id}`.
 * - `POST /api/<project>/security/?sentry_key=`: browsers' Content-Security-Policy reports (`report-uri` and
 *   `report-to`), each violation a security issue of the `csp` kind.
 * The public key comes in `X-Sentry-Auth`, `Authorization: Sentry …`, `?sentry_key=` or the envelope header's
 * dsn. CORS for browsers. A DSN is shared by every browser of a site, so the per-key rate limit of the sessions
 * endpoint (spec 8) does not apply here: quotas and admission govern these routes (issue 66).
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { EnvelopeError, looksLikeEnvelope, parseDsn, parseEnvelope, type Envelope } from '../../domain/envelope.ts';
import { BadRequestError, ForbiddenError, UnauthorizedError } from '../../errors.ts';
import type { SentryOptions } from '../../services/sentry.service.ts';
import { contracted, paramsOf, type Contract } from '../contract.ts';
import { PARAMS } from '../params.ts';
import type { AppDeps, AppState } from '../deps.ts';
import { parseJson } from '../../util/json.ts';
import { clientGone, readBytes, storeText } from '../body.ts';
import { sentryRateLimits } from '../../domain/admission.ts';
import { authenticate, sentryKey } from '../middleware/auth.middleware.ts';
import { corsMiddleware } from '../middleware/cors.middleware.ts';


export function sentryRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api' });
  const routes = contracted(router, deps);

  /** Authenticates the public key, checks it against the project in the path (if any) and reads the body. */
  const authenticated =
    (read: (ctx: Context & { state: AppState }, body: Buffer) => void) =>
    async (ctx: Context & { state: AppState }, next: () => Promise<unknown>) => {
      // the DSN's project (PARAMS.dsnProject), read by the route's contract before the body is
      const { project } = paramsOf(ctx) as { project?: number };
      const body = await readBytes(ctx, deps.config.bodyLimitBytes);
      read(ctx, body);
      const key = sentryKey(ctx) ?? parseDsn(ctx.state.envelope?.header.dsn)?.key;
      if (!key) throw new UnauthorizedError('missing_key', 'send the public key in X-Sentry-Auth, ?sentry_key= or the envelope header dsn');
      const resolved = await authenticate(deps.resolver, key, 'public');
      if (project !== undefined && resolved.project._id !== project)
        throw new ForbiddenError('project_mismatch', 'the key belongs to another project than the one in the path');
      ctx.state.project = resolved.project;
      await next();
    };
  const options = (ctx: Context & { state: AppState }): SentryOptions => ({ now: new Date(), clientIp: ctx.ip, log: ctx.state.log, gone: clientGone(ctx) });
  /** An envelope's answer; items a quota held back are named in X-Sentry-Rate-Limits, as Relay does. */
  const envelopeAnswer = async (ctx: Context & { state: AppState }) => {
    const { limited, ...answer } = await deps.sentry.envelope(ctx.state.project, ctx.state.envelope!, options(ctx));
    if (limited) ctx.set('X-Sentry-Rate-Limits', sentryRateLimits(limited.retryAfter, limited.reason, limited.categories, limited.scope));
    return answer;
  };

  const envelope = '/:project/envelope/';
  routes.preflight(
    envelope,
    { tag: 'sessions', summary: 'CORS preflight of the envelope endpoint', auth: 'none', ok: { 204: 'CORS headers' } },
    corsMiddleware(),
  );
  routes.post(
    envelope,
    {
      tag: 'sessions',
      summary: 'Sentry-compatible envelope: event, session, sessions and client_report items are ingested; every other item type is acknowledged and counted',
      auth: 'sentry',
      params: [PARAMS.dsnProject],
      body: { raw: 'application/x-sentry-envelope', description: 'newline-delimited envelope; gzip, deflate or br Content-Encoding' },
      ok: { 200: { description: 'the envelope taken; `dropped` the types of the items not stored', schema: 'envelope-accepted' } },
      errors: [400, 413, 429, 503],
    },
    authenticated((ctx, body) => (ctx.state.envelope = readEnvelope(body))),
    async (ctx) => {
      ctx.status = 200;
      ctx.body = await envelopeAnswer(ctx);
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
      ? await envelopeAnswer(ctx)
      : await deps.sentry.store(state.project, state.sentryBody!.value, { ...options(ctx), receivedBytes: state.sentryBody!.bytes });
  };
  const STORE: Record<string, { preflight: Contract; post: Contract }> = {
    '/:project/store/': {
      preflight: { tag: 'sessions', summary: 'CORS preflight of the store endpoint', auth: 'none', ok: { 204: 'CORS headers' } },
      post: {
        tag: 'sessions',
        summary: "Sentry's store endpoint (older SDKs and the raven clients): one event; an envelope posted here is read as one",
        auth: 'sentry',
        params: [PARAMS.dsnProject],
        body: {
          raw: 'application/json',
          description: 'an event as JSON; gzip, deflate or br Content-Encoding; or base64 of (zlib-deflated) JSON as application/octet-stream',
        },
        ok: { 200: { description: 'the event id', schema: 'event-id' } },
        errors: [400, 413, 429, 503],
      },
    },
    '/store/': {
      preflight: { tag: 'sessions', summary: 'CORS preflight of the project-less store endpoint', auth: 'none', ok: { 204: 'CORS headers' } },
      post: {
        tag: 'sessions',
        summary: "The store endpoint without a project in the path: the project is the public key's",
        auth: 'sentry',
        body: { raw: 'application/json', description: 'as POST /api/{project}/store/' },
        ok: { 200: { description: 'the event id', schema: 'event-id' } },
        errors: [400, 413, 429, 503],
      },
    },
  };
  for (const [path, contract] of Object.entries(STORE)) {
    routes.preflight(path, contract.preflight, corsMiddleware());
    routes.post(
      path,
      contract.post,
      authenticated((ctx, body) => storeBody(ctx, body)),
      store,
    );
  }

  // Browsers' CSP reports, from `report-uri` (no preflight) or `report-to` (preflighted): ?sentry_key= in the URL
  const security = '/:project/security/';
  routes.preflight(
    security,
    { tag: 'sessions', summary: 'CORS preflight of the security report endpoint (report-to)', auth: 'none', ok: { 204: 'CORS headers' } },
    corsMiddleware(),
  );
  routes.post(
    security,
    {
      tag: 'sessions',
      summary: "Browsers' Content-Security-Policy reports (report-uri or report-to): each violation becomes an event in a security issue of the csp kind",
      auth: 'sentry',
      params: [PARAMS.dsnProject],
      body: {
        raw: 'application/csp-report',
        description: '`{"csp-report": {...}}` (report-uri), or application/reports+json: `[{type: "csp-violation", url, user_agent, body}]` (report-to)',
      },
      ok: { 200: { description: 'the event ids of the violations', schema: 'report-accepted' } },
      errors: [400, 413, 429, 503],
    },
    authenticated((ctx, body) => (ctx.state.sentryBody = { value: parseJson(body.toString('utf8'), 'the report'), bytes: body.length })),
    async (ctx) => {
      ctx.status = 200;
      ctx.body = await deps.sentry.securityReport(ctx.state.project, ctx.state.sentryBody!.value, {
        ...options(ctx),
        userAgent: ctx.get('user-agent') || null,
      });
    },
  );
  return router;
}

const isEnvelopeType = (ctx: Context) => (ctx.get('content-type').split(';')[0] ?? '').trim().toLowerCase() === 'application/x-sentry-envelope';

function readEnvelope(body: Buffer): Envelope {
  try {
    return parseEnvelope(body);
  } catch (err) {
    if (err instanceof EnvelopeError) throw new BadRequestError('malformed_envelope', err.message);
    throw err;
  }
}
