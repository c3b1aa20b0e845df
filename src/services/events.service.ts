/**
 * Event ingestion (spec 4.5). Requests arriving together are written as one
 * group: a backlog marker, then the events in one unordered insert (journaled;
 * a duplicate `event_id` is refused per item by the unique `_id` and answered
 * `duplicate: true`), then each caller is answered 202. One BullMQ job per
 * group carries what the worker needs; when Redis is unavailable the marker
 * stays on the backlog and the sweeper enqueues the group later, so nothing
 * acknowledged is lost.
 */
import { describeError, fingerprintOf, type ErrorEventShape } from '../domain/fingerprint.ts';
import { ForbiddenError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { Queues } from '../queues/registry.ts';
import { makeSweep } from '../queues/sweep.ts';
import { eventKey, type EventDoc, type EventsStore } from '../store/events.store.ts';
import type { ProjectDoc } from '../store/projects.store.ts';
import { makeGroupCommit, newGroupId } from '../util/group-commit.ts';

export interface EventBody extends ErrorEventShape {
  event_id: string;
  timestamp: string;
  release?: string;
  level?: string;
  tags?: Record<string, string>;
  security?: { kind: string; actor?: string; actor_id?: string; ip?: string; user_agent?: string; outcome?: string };
  [key: string]: unknown;
}

/** What a worker needs of a stored event: everything but the payload, plus what grouping reads from it. */
export type EventEntry = Omit<EventDoc, 'payload'> & { level: string; title: string; exception_type: string | null; company: string | null };

export function entryOf(doc: EventDoc, body: EventBody = JSON.parse(doc.payload) as EventBody): EventEntry {
  const { payload: _, ...rest } = doc;
  const p = body as { level?: string; tags?: Record<string, string> };
  const { title, exception_type } = doc.kind === 'error' ? describeError(body) : { title: '', exception_type: null };
  return { ...rest, level: p.level ?? 'error', title, exception_type, company: p.tags?.company ?? null };
}

export function groupJobId(id: string): string {
  return `eg-${id}`;
}

/** Most events written in one group. */
const GROUP_MAX_EVENTS = 1000;

export function makeEventsService(deps: { events: EventsStore; queues: Queues; log: Logger; metrics: Metrics; writesInFlight: number }) {
  const { events, queues, log, metrics } = deps;
  const enqueues = new Set<Promise<unknown>>();

  const group = makeGroupCommit<{ doc: EventDoc; body: EventBody; duplicate?: boolean }>(
    async (items) => {
      const id = newGroupId();
      const receivedAt = new Date();
      for (const item of items) item.doc.batch = id;
      const duplicates = await events.insertGroup({ _id: id, received_at: receivedAt }, items.map((i) => i.doc));
      items.forEach((item, i) => (item.duplicate = duplicates.has(i)));
      const stored = items.filter((i) => !i.duplicate).map((i) => entryOf(i.doc, i.body));
      if (stored.length === 0) return events.finishBatches([id]); // every event was stored before: nothing to apply
      // The events are durable: callers are answered now; the job is added on the side.
      const enqueue = queues
        .enqueue('events.process', { id, received_at: receivedAt.toISOString(), events: stored }, groupJobId(id))
        .catch((err: Error) => log.warn({ err: err.message, group: id }, 'enqueue failed; the sweeper will enqueue the stored group'))
        .finally(() => enqueues.delete(enqueue));
      enqueues.add(enqueue);
    },
    { maxItems: GROUP_MAX_EVENTS, maxInFlight: deps.writesInFlight },
  );

  return {
    async ingest(project: ProjectDoc, body: EventBody, now: Date): Promise<{ id: string; duplicate: boolean }> {
      const security = body.security;
      if (security && !project.security_monitoring) {
        throw new ForbiddenError('security_monitoring_disabled', 'security monitoring is off for this project; turn it on to send sign-in attempts');
      }
      const actor = security ? (security.actor ?? security.actor_id ?? null) : null;
      const ip = security?.ip ?? null;
      const item = {
        doc: {
          _id: eventKey(project._id, body.event_id),
          project_id: project._id,
          event_id: body.event_id,
          batch: '',
          kind: security ? 'security' : 'error',
          security_kind: security?.kind ?? null,
          actor,
          ip,
          group_key: security ? `${actor}|${ip ?? '-'}` : null,
          fingerprint: security ? null : fingerprintOf(body),
          release: body.release ?? null,
          at: new Date(body.timestamp),
          received_at: now,
          payload: JSON.stringify(body),
        } satisfies EventDoc as EventDoc,
        body,
        duplicate: false,
      };
      await group.add(item);
      metrics.ingest('event', item.duplicate ? 'duplicated' : 'accepted');
      return { id: body.event_id, duplicate: item.duplicate };
    },

    /** Enqueues stored groups whose job was never added or was lost (src/queues/sweep.ts). */
    sweep: makeSweep(queues, {
      job: 'events.process',
      unprocessed: (olderThan, limit) => events.unprocessed(olderThan, limit),
      jobId: groupJobId,
      payload: (id) => ({ id }),
    }),

    /** Waits for writes and enqueues in flight (graceful shutdown). */
    async drain(): Promise<void> {
      await group.drain();
      await Promise.all([...enqueues]);
    },
  };
}
export type EventsService = ReturnType<typeof makeEventsService>;
