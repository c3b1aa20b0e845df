/**
 * Event ingestion (spec 4.5): store the event durably (journaled, deduped by
 * its _id), then enqueue its processing. The 202 is sent only after the
 * insert; if Redis is unavailable the event stays unprocessed and the
 * sweeper enqueues it later, so nothing acknowledged is lost.
 */
import { fingerprintOf, type ErrorEventShape } from '../domain/fingerprint.ts';
import { ForbiddenError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { Queues } from '../queues/registry.ts';
import { makeSweep } from '../queues/sweep.ts';
import { eventKey, type EventDoc, type EventsStore } from '../store/events.store.ts';
import type { ProjectDoc } from '../store/projects.store.ts';

export interface EventBody extends ErrorEventShape {
  event_id: string;
  timestamp: string;
  release?: string;
  level?: string;
  tags?: Record<string, string>;
  security?: { kind: string; actor?: string; actor_id?: string; ip?: string; user_agent?: string; outcome?: string };
  [key: string]: unknown;
}

export function eventJobId(docId: string): string {
  return `ev-${docId.replace(':', '-')}`; // BullMQ job ids may not contain ':'
}

export function makeEventsService(events: EventsStore, queues: Queues, log: Logger, metrics: Metrics) {
  return {
    async ingest(project: ProjectDoc, body: EventBody, now: Date): Promise<{ id: string; duplicate: boolean }> {
      const security = body.security;
      if (security && !project.security_monitoring) {
        throw new ForbiddenError('security_monitoring_disabled', 'security monitoring is off for this project; turn it on to send sign-in attempts');
      }
      const actor = security ? (security.actor ?? security.actor_id ?? null) : null;
      const ip = security?.ip ?? null;
      const doc: EventDoc = {
        _id: eventKey(project._id, body.event_id),
        project_id: project._id,
        event_id: body.event_id,
        kind: security ? 'security' : 'error',
        security_kind: security?.kind ?? null,
        actor,
        ip,
        group_key: security ? `${actor}|${ip ?? '-'}` : null,
        fingerprint: security ? null : fingerprintOf(body),
        release: body.release ?? null,
        at: new Date(body.timestamp),
        received_at: now,
        payload: body,
        processed: false,
      };
      if ((await events.insert(doc)) === 'duplicate') {
        metrics.ingest('event', 'duplicated');
        return { id: body.event_id, duplicate: true };
      }
      metrics.ingest('event', 'accepted');
      try {
        await queues.enqueue('events.process', { id: doc._id }, eventJobId(doc._id));
      } catch (err) {
        log.warn({ err: (err as Error).message }, 'enqueue failed; the sweeper will enqueue the stored event');
      }
      return { id: body.event_id, duplicate: false };
    },

    /** Enqueues stored events whose job was never added or was lost (src/queues/sweep.ts). */
    sweep: makeSweep(queues, {
      job: 'events.process',
      unprocessed: (olderThan, limit) => events.unprocessed(olderThan, limit),
      jobId: eventJobId,
      payload: (id) => ({ id }),
    }),
  };
}
export type EventsService = ReturnType<typeof makeEventsService>;
