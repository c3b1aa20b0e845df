/**
 * What Sentry's SDKs send, old and new (issue 46), read as Relay reads it:
 * an event from the store endpoint, or the items of an envelope. `event`
 * items and store bodies go to the events pipeline as error events,
 * `session` and `sessions` items to the sessions pipeline, user feedback
 * (`feedback`, `user_report`) is kept with the issue of its event, an
 * attachment with its event (up to a cap per event), a client
 * report is counted as what the SDK itself discarded, and every other item type,
 * known or not yet invented, is acknowledged and counted, never a reason to
 * refuse the envelope. Each item is counted per project, by type and
 * reason, accepted or dropped (src/state/ingest-stats.ts).
 */
import type { CheckInsService } from './checkins.service.ts';
import crypto from 'node:crypto';
import { cutText } from '../domain/client-keys.ts';
import { parseEnvelope, type Envelope, type EnvelopeItem } from '../domain/envelope.ts';
import { isObj } from '../domain/obj.ts';
import { AppError, BadRequestError, RefusedError } from '../errors.ts';
import { readFeedback } from '../domain/feedback.ts';
import { cspEvent, readCspReports } from '../domain/csp.ts';
import type { Logger } from '../log.ts';
import { parseJson } from '../util/json.ts';
import type { IngestStats } from '../state/ingest-stats.ts';
import { EVENT_CAP_BYTES, type AttachmentsStore } from '../store/attachments.store.ts';
import type { ProjectDoc } from '../store/projects.store.ts';
import type { EventsService } from './events.service.ts';
import type { FeedbackService } from './feedback.service.ts';
import type { ReadSessions, SessionsService } from './sessions.service.ts';
import { CATEGORY, isTraceType, type TraceItem, type TracesService } from './traces.service.ts';

/** An envelope's trace item as the traces service reads it: its header carries the envelope's event id. */
function traceItem(envelope: Envelope, type: TraceItem['type'], item: EnvelopeItem, payload: unknown): TraceItem {
  return { type, payload, header: { ...item.header, event_id: envelope.header.event_id } };
}

export interface SentryOptions {
  now: Date;
  /** the sender's address, for `{{auto}}` */
  clientIp: string;
  log: Logger;
  /** whether the sender has gone (then nothing more of its request is written) */
  gone?: () => boolean;
}

/** Why an item that broke a rule was dropped, as the counts name it. */
function dropReason(err: AppError): string {
  if (err.status === 413) return 'too_large';
  if (err.reason === 'security_monitoring_disabled') return err.reason;
  return 'invalid';
}

export function makeSentryService(deps: {
  events: EventsService;
  sessions: SessionsService;
  feedback: FeedbackService;
  checkIns: CheckInsService;
  traces: TracesService;
  attachments: AttachmentsStore;
  stats: IngestStats;
}) {
  const { events, sessions, feedback, checkIns, traces, attachments, stats } = deps;

  /** One error event, stored (the events service counts it). */
  async function event(project: ProjectDoc, raw: unknown, opts: SentryOptions & { receivedBytes: number; eventId?: unknown }): Promise<{ id: string }> {
    const body = isObj(raw) ? fromSentry(raw, opts.eventId) : raw;
    const { id } = await events.accept(project, body, { now: opts.now, clientIp: opts.clientIp, receivedBytes: opts.receivedBytes, untitled: UNTITLED, kind: 'error', gone: opts.gone });
    return { id };
  }

  return {
    /** What taking an envelope's events, sessions and trace items costs the thread, nothing written (src/services/warm-up.ts). */
    rehearse(body: Buffer, now: Date): void {
      const envelope = parseEnvelope(body);
      for (const item of envelope.items) {
        const raw = parseJson(item.payload.toString('utf8'), 'item', false);
        if (item.type === 'event') events.rehearse(isObj(raw) ? fromSentry(raw, envelope.header.event_id) : raw, now);
        else if (item.type === 'session' || item.type === 'sessions') sessions.rehearse(raw, now);
        else if (isTraceType(item.type)) traces.rehearse(traceItem(envelope, item.type, item, raw), envelope.header.trace, now);
      }
    },

    /** A store endpoint's event (parsed JSON); an event that cannot be used is counted and refused with its reason. */
    async store(project: ProjectDoc, raw: unknown, opts: SentryOptions & { receivedBytes: number }): Promise<{ id: string }> {
      try {
        return await event(project, raw, opts);
      } catch (err) {
        // a refusal (a quota, spike protection) is counted where it was made
        if (err instanceof AppError && err.status < 500 && !(err instanceof RefusedError)) stats.record(project._id, 'dropped', 'event', dropReason(err), 1, opts.now);
        throw err;
      }
    },

    /**
     * A browser's security report body (`report-uri` or `report-to`): each CSP violation becomes an event of its
     * own, in a security issue of the `csp` kind (src/domain/csp.ts); other report types are counted as dropped.
     */
    async securityReport(project: ProjectDoc, body: unknown, opts: SentryOptions & { userAgent: string | null }): Promise<{ ids: string[] }> {
      const { violations, skipped } = readCspReports(body);
      stats.record(project._id, 'dropped', 'security', 'not_kept', skipped, opts.now);
      const ids: string[] = [];
      for (const v of violations) {
        const raw = cspEvent({ ...v, user_agent: v.user_agent ?? opts.userAgent }, crypto.randomUUID().replace(/-/g, ''), opts.now);
        ids.push((await event(project, raw, { ...opts, receivedBytes: 0 })).id);
      }
      return { ids };
    },

    /**
     * An envelope's items, each on its own: an item that breaks a rule is dropped (and counted) and the rest go
     * on. Returns the envelope's event id, the sessions accepted and the types of the items dropped, and the
     * refusal of the items a quota held back (for X-Sentry-Rate-Limits); when a quota held back every item that
     * would have been kept, the envelope is refused with it (429).
     */
    async envelope(project: ProjectDoc, envelope: Envelope, opts: SentryOptions): Promise<{ id: string | null; sessions: number; dropped: string[]; limited?: RefusedError }> {
      const read: ReadSessions = { sessions: [], aggregates: [], accepted: 0, skipped: [] };
      const dropped: string[] = [];
      let limited: RefusedError | undefined;
      let kept = 0;
      /** An item dropped: named by its type in the answer, counted in its category (a trace item's: transaction, span, log_item). */
      const drop = (type: string, reason: string, category = type) => {
        dropped.push(type);
        stats.record(project._id, 'dropped', category, reason, 1, opts.now);
      };
      for (const [i, item] of envelope.items.entries()) {
        const where = `item ${i + 1}`;
        try {
          switch (item.type) {
            case 'event':
              await event(project, parseJson(item.payload.toString('utf8'), where, false), { ...opts, receivedBytes: item.payload.length, eventId: envelope.header.event_id });
              kept += 1;
              break;
            case 'session':
            case 'sessions': {
              const part = sessions.read(project._id, parseJson(item.payload.toString('utf8'), where), opts.now);
              read.sessions.push(...part.sessions);
              read.aggregates.push(...part.aggregates);
              read.accepted += part.accepted;
              read.skipped.push(...part.skipped); // counted by the sessions service with the rest
              break;
            }
            case 'feedback':
            case 'user_report': {
              const written = readFeedback(item.type, parseJson(item.payload.toString('utf8'), where, false));
              if (!written) throw new BadRequestError('invalid_feedback', 'the feedback holds no comments');
              await feedback.record(project._id, written, opts.now);
              stats.record(project._id, 'accepted', item.type, '', 1, opts.now);
              break;
            }
            case 'attachment': {
              const kept = await attachment(project._id, envelope.header.event_id, item, opts.now);
              if (kept === 'kept') stats.record(project._id, 'accepted', item.type, '', 1, opts.now);
              else drop(item.type, kept);
              break;
            }
            case 'check_in': {
              // a cron monitor's check-in (issue 68): stored, or counted as dropped when its monitor sent too many
              const body = parseJson(item.payload.toString('utf8'), where, false);
              if ((await checkIns.accept(project, { body }, { now: opts.now, gone: opts.gone })) === 'rate_limited') dropped.push(item.type);
              break;
            }
            case 'transaction':
            case 'span':
            case 'log':
            case 'otel_log': {
              // traces and logs (issue 69): counted per transaction, span and log line
              const payload = parseJson(item.payload.toString('utf8'), where, false);
              await traces.accept(project, traceItem(envelope, item.type, item, payload), { now: opts.now, traceHeader: envelope.header.trace, gone: opts.gone });
              kept += 1;
              break;
            }
            case 'client_report':
              clientReport(project._id, parseJson(item.payload.toString('utf8'), where, false), opts.now);
              stats.record(project._id, 'accepted', item.type, '', 1, opts.now);
              break;
            default:
              // profiles, replays, metrics and types not yet invented
              drop(item.type, 'not_kept');
          }
        } catch (err) {
          if (err instanceof RefusedError) {
            // counted where it was refused
            limited = err;
            dropped.push(item.type);
            continue;
          }
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          // a trace item is counted in its category (transaction, span, log_item) with the reason its reader named
          if (isTraceType(item.type)) drop(item.type, err.status === 413 ? 'too_large' : err.reason, CATEGORY[item.type]);
          else drop(item.type, dropReason(err));
          opts.log.info({ item: i + 1, type: item.type, reason: err.reason, why: err.message }, 'envelope item dropped');
        }
      }
      if (read.sessions.length || read.aggregates.length) {
        try {
          await sessions.ingest(project, read, opts.gone);
          kept += 1;
        } catch (err) {
          if (!(err instanceof RefusedError)) throw err;
          limited = err;
          read.accepted = 0;
        }
      }
      if (limited && kept === 0) throw limited;
      return { id: typeof envelope.header.event_id === 'string' ? envelope.header.event_id : null, sessions: read.accepted, dropped, ...(limited ? { limited } : {}) };
    },
  };

  /**
   * An attachment of the envelope's event, kept up to the event's cap (src/store/attachments.store.ts); one over
   * it is noted on the event without its bytes.
   */
  async function attachment(project: number, eventId: unknown, item: EnvelopeItem, now: Date): Promise<'kept' | 'too_large' | 'too_many_attachments'> {
    const id = typeof eventId === 'string' ? eventId.toLowerCase().replace(/-/g, '') : '';
    if (!/^[0-9a-f]{32}$/.test(id)) throw new BadRequestError('invalid_attachment', 'an attachment needs the envelope header\'s event_id');
    const text = (v: unknown, max: number) => (typeof v === 'string' && v !== '' ? cutText(v, max) : null);
    const file = {
      filename: text(item.header.filename, 255) ?? 'attachment',
      content_type: text(item.header.content_type, 255),
      attachment_type: text(item.header.attachment_type, 64) ?? 'event.attachment',
      data: item.payload,
    };
    const stored = await attachments.add(project, id, file, EVENT_CAP_BYTES, now);
    if (!stored) return 'too_many_attachments';
    return stored.dropped ?? 'kept';
  }

  /** What an SDK reports it discarded itself (`discarded_events: [{reason, category, quantity}]`), counted as dropped. */
  function clientReport(project: number, report: unknown, now: Date): void {
    const discarded = isObj(report) && Array.isArray(report.discarded_events) ? report.discarded_events : [];
    for (const d of discarded) {
      if (!isObj(d) || typeof d.reason !== 'string' || typeof d.category !== 'string') continue;
      const quantity = typeof d.quantity === 'number' && Number.isInteger(d.quantity) && d.quantity > 0 ? Math.min(d.quantity, 1e9) : 0;
      stats.record(project, 'dropped', d.category, `client_${d.reason}`, quantity, now);
    }
  }
}
export type SentryService = ReturnType<typeof makeSentryService>;

/** The text of an SDK's event that carries none Lookout can use. */
const UNTITLED = 'event without message';

/**
 * What an SDK's event reads differently from the native one: an event id may come as a UUID, or be missing
 * (the envelope header's, else a new one, as Relay gives) or not an id (a new one), an event with neither exception nor message is still
 * an event, and security fields are never taken from here (sign-in attempts need the secret key). Everything else
 * goes through the one normaliser.
 */
function fromSentry(raw: Record<string, unknown>, headerId?: unknown): Record<string, unknown> {
  const { security: _, ...event } = raw;
  const id = (v: unknown) => (typeof v === 'string' ? v.toLowerCase().replace(/-/g, '') : '');
  // the event's own id; the envelope header's when it sent none; a new one when it sent one that is not an id
  const own = event.event_id === undefined || event.event_id === null ? id(headerId) : id(event.event_id);
  event.event_id = /^[0-9a-f]{32}$/.test(own) ? own : crypto.randomUUID().replace(/-/g, '');
  const text = ['exception', 'message', 'logentry', 'sentry.interfaces.Exception', 'sentry.interfaces.Message'].some((k) => event[k] !== undefined && event[k] !== null);
  if (!text) event.message = UNTITLED;
  return event;
}
