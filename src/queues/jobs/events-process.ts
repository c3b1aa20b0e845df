/**
 * The `events.process` job's payload: groups of events, each event in its job form (what the worker cannot derive
 * from the group), and the job's dedupe id. The API's group commit writes it (src/services/events.service.ts);
 * workers/events-process.handler.ts reads it back.
 */
import { attemptGroupKey } from '../../domain/client-keys.ts';
import { eventKey, type EventDoc } from '../../store/events.store.ts';

/** What a worker needs of a stored event: everything but the payload, plus what grouping reads from it. */
export type EventEntry = Omit<EventDoc, 'payload'> & { level: string; title: string; culprit: string; exception_type: string | null };

/** An event as its job carries it: what the worker cannot derive (`entryOfJob`). */
export type JobEvent = Pick<EventEntry, 'project_id' | 'event_id' | 'kind'> & Partial<Omit<EventEntry, 'at'>> & { at: Date | string };

/** Defaults the job form leaves out. */
const ENTRY_DEFAULTS = { release: null, environment: null, company: null, level: 'error', title: '', culprit: '', exception_type: null } as const;

/**
 * The job form of an entry: without its key, group, time received (the group's) and an attempt's group key (its
 * actor and address), and without the fields that hold their default. About a third of a sign-in attempt's entry:
 * the events' jobs were a fifth of what Redis wrote to its append-only file (docs/performance.md).
 */
export function jobEvent(entry: EventEntry): JobEvent {
  const { _id, batch, received_at, group_key, ...rest } = entry;
  const kept = Object.entries(rest).filter(([field, value]) => value !== undefined && value !== ENTRY_DEFAULTS[field as keyof typeof ENTRY_DEFAULTS]);
  return Object.fromEntries(kept) as JobEvent;
}

/** The entry a job's event stands for, in the group it came in (a job added before the job form carries entries whole). */
export function entryOfJob(event: JobEvent, group: { id: string; received_at?: string }): EventEntry {
  return {
    ...ENTRY_DEFAULTS,
    ...event,
    _id: eventKey(event.project_id, event.event_id),
    batch: group.id,
    at: new Date(event.at),
    received_at: new Date(group.received_at ?? event.received_at ?? event.at),
    ...(event.kind === 'security' && { group_key: attemptGroupKey(event.actor ?? null, event.ip ?? null) }),
  };
}

export function groupJobId(id: string): string {
  return `eg-${id}`;
}
