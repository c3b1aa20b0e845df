/**
 * The `events.process` job, as both sides see it: its payload (groups of events, each event in its job form: what the
 * worker cannot derive from the group), the entry each event stands for, and the job's dedupe id. The API's group
 * commit writes it (src/services/events.service.ts); the worker digests it (workers/digest/events.ts).
 */
import { attemptGroupKey } from '../../domain/client-keys.ts';
import { eventImpact, type EventImpact } from '../../domain/event-impact.ts';
import { describeError, type ErrorEventShape } from '../../domain/fingerprint.ts';
import { isObj, type Obj } from '../../domain/obj.ts';
import { spanIdOf, traceIdOf } from '../../domain/transactions.ts';
import { attemptFields, type AttemptBody, type StoredAttempt } from '../../store/attempts.store.ts';
import { eventKey, payloadOf, type EventDoc } from '../../store/events.store.ts';

/** Groups of events; the API's jobs carry the events, the sweeper's only each group's id. */
export interface EventsProcessPayload {
  groups: { id: string; received_at?: string; events?: JobEvent[] }[];
}

/** What a worker needs of a stored event: everything but the payload, plus what grouping and its issue's counts read from it. */
export type EventEntry = Omit<EventDoc, 'payload'> & { level: string; title: string; culprit: string; exception_type: string | null } & Partial<EventImpact> & {
    /** the trace it happened in (`contexts.trace`), for the trace page: `<trace_id>` or `<trace_id>:<span_id>` */
    trace?: string;
  };

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

/** The entry of a stored error event (its body read from the document unless given). */
export function entryOf(doc: EventDoc, body: ErrorEventShape & { level?: string } = payloadOf(doc) as ErrorEventShape): EventEntry {
  const { payload: _, ...rest } = doc;
  if (doc.kind !== 'error') return { ...rest, level: body.level ?? 'error', title: '', culprit: '', exception_type: null };
  // its user and tags only when it has some: the job form carries no empty field
  const { user, tags } = eventImpact(body as Obj);
  const trace = traceOf(body as Obj);
  return { ...rest, level: body.level ?? 'error', ...describeError(body), ...(user && { user }), ...(tags.length > 0 && { tags }), ...(trace && { trace }) };
}

/** An error event's trace and span (`contexts.trace`), as its entry carries them; null when it names none. */
function traceOf(body: Obj): string | null {
  const trace = isObj(body.contexts) && isObj(body.contexts.trace) ? body.contexts.trace : null;
  const traceId = trace ? traceIdOf(trace.trace_id) : null;
  if (!traceId) return null;
  const spanId = spanIdOf(trace!.span_id);
  return spanId ? `${traceId}:${spanId}` : traceId;
}

/** The entry of a sign-in attempt received at `receivedAt`. */
export function attemptEntryOf(project: number, body: AttemptBody, receivedAt: Date): EventEntry {
  const { event_id, at, security_kind, actor, ip, group_key, release, environment, company } = attemptFields(body);
  return {
    _id: eventKey(project, event_id),
    project_id: project,
    event_id,
    batch: '',
    kind: 'security',
    security_kind,
    actor,
    ip,
    group_key,
    release,
    environment,
    company,
    at,
    received_at: receivedAt,
    level: (body.level as string | undefined) ?? 'error',
    title: '',
    culprit: '',
    exception_type: null,
  };
}

/** What a worker needs of a stored attempt (a swept group's, read back). */
export function attemptEntry(a: StoredAttempt): EventEntry {
  return { ...attemptEntryOf(a.project_id, a.body, a.received_at), batch: a.batch };
}
