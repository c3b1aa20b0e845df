/**
 * POST /api/<project>/envelope/: the Sentry envelope endpoint, so other
 * makers' SDKs can report to Lookout with a DSN
 * `http://<public key>@<host>/<project id>`. `session` and `sessions` items
 * go to the sessions pipeline, `event` items to the events pipeline (as
 * error events); every other item type is acknowledged and dropped. Items
 * that break a rule are dropped too, as Sentry's own ingestion does; the
 * envelope itself is refused only when it cannot be read.
 */
import Router from '@koa/router';
import { EnvelopeError, keyFromSentryAuth, parseDsn, parseEnvelope, type Envelope } from '../../domain/envelope.ts';
import { isObj } from '../../domain/error-event.ts';
import { AppError, BadRequestError, ForbiddenError, UnauthorizedError } from '../../errors.ts';
import { prepareEvent } from '../../services/events.service.ts';
import type { ReadSessions } from '../../services/sessions.service.ts';
import type { AppDeps, AppState } from '../app.ts';
import { parseJson, readBytes } from '../body.ts';
import { authenticate } from '../middleware/auth.middleware.ts';
import { corsMiddleware } from '../middleware/cors.middleware.ts';

export function envelopeRoutes(deps: AppDeps): Router<AppState> {
  const router = new Router<AppState>({ prefix: '/api' });
  const path = '/:project/envelope/';

  router.all(path, corsMiddleware());
  router.post(
    path,
    async (ctx, next) => {
      const project = ctx.params.project ?? '';
      if (!/^[1-9]\d{0,15}$/.test(project)) throw new BadRequestError('invalid_project', 'the project id in the path must be a number');
      const envelope = readEnvelope(await readBytes(ctx, deps.config.bodyLimitBytes));
      const dsn = parseDsn(envelope.header.dsn);
      const key = keyFromSentryAuth(ctx.get('x-sentry-auth')) ?? (typeof ctx.query.sentry_key === 'string' ? ctx.query.sentry_key : undefined) ?? dsn?.key;
      if (!key) throw new UnauthorizedError('missing_key', 'send the public key in X-Sentry-Auth, ?sentry_key= or the envelope header dsn');
      const resolved = await authenticate(deps.resolver, key, 'public');
      if (String(resolved.project._id) !== project) throw new ForbiddenError('project_mismatch', 'the key belongs to another project than the one in the path');
      ctx.state.project = resolved.project;
      ctx.state.envelope = envelope;
      ctx.state.envelopeKey = key;
      await next();
    },
    deps.rateLimit((ctx) => ctx.state.envelopeKey!),
    async (ctx) => {
      const envelope = ctx.state.envelope!;
      const project = ctx.state.project;
      const now = new Date();
      const sessions: ReadSessions = { sessions: [], aggregates: [], accepted: 0, skipped: [] };
      const dropped: string[] = [];
      for (const [i, item] of envelope.items.entries()) {
        try {
          if (item.type === 'session' || item.type === 'sessions') {
            const read = deps.sessions.read(project._id, parseJson(item.payload.toString('utf8'), `item ${i + 1}`), now);
            sessions.sessions.push(...read.sessions);
            sessions.aggregates.push(...read.aggregates);
            sessions.accepted += read.accepted;
          } else if (item.type === 'event') {
            const raw = parseJson(item.payload.toString('utf8'), `item ${i + 1}`, false);
            const event = prepareEvent(deps.validator, isObj(raw) ? fromEnvelope(raw) : raw, { now, clientIp: ctx.ip, receivedBytes: item.payload.length });
            await deps.events.ingest(project, event, now);
          } else {
            dropped.push(item.type);
          }
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          dropped.push(item.type);
          if (item.type === 'event') deps.metrics.ingest('event', 'rejected');
          ctx.state.log.info({ item: i + 1, type: item.type, reason: err.reason, why: err.message }, 'envelope item dropped');
        }
      }
      if (sessions.sessions.length || sessions.aggregates.length) await deps.sessions.ingest(project._id, sessions);
      ctx.status = 200;
      ctx.body = { id: typeof envelope.header.event_id === 'string' ? envelope.header.event_id : null, sessions: sessions.accepted, dropped };
    },
  );
  return router;
}

/**
 * What the envelope path reads differently: an event id may come as a UUID, an event with neither exception
 * nor message is still an event, and security fields are never taken from here (sign-in attempts need the
 * secret key). Everything else goes through the one normaliser.
 */
function fromEnvelope(raw: Record<string, unknown>): Record<string, unknown> {
  const { security: _, ...event } = raw;
  if (typeof event.event_id === 'string') event.event_id = event.event_id.toLowerCase().replace(/-/g, '');
  if (event.exception === undefined && event.message === undefined && event.logentry === undefined) event.message = 'event without message';
  return event;
}

function readEnvelope(body: Buffer): Envelope {
  try {
    return parseEnvelope(body);
  } catch (err) {
    if (err instanceof EnvelopeError) throw new BadRequestError('malformed_envelope', err.message);
    throw err;
  }
}
