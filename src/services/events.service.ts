/**
 * Event ingestion (spec 4.5). Requests arriving together are written as one
 * group: a backlog marker, then the events in one unordered insert (journaled;
 * a duplicate `event_id` is refused per item by the unique `_id` and answered
 * `duplicate: true`), then each caller is answered 202. The groups stored
 * within 25 ms go to the workers in one BullMQ job (src/queues/gather.ts)
 * that carries what they need; when Redis is unavailable the markers stay on the backlog and
 * the sweeper enqueues the groups later, so nothing acknowledged is lost.
 */
import { normalizeEvent, type Meta } from '../domain/error-event.ts';
import { isObj, type Obj } from '../domain/obj.ts';
import { mapRequests } from '../domain/sourcemaps.ts';
import { fingerprintOf, type ErrorEventShape } from '../domain/fingerprint.ts';
import { scrubEvent } from '../domain/scrub.ts';
import { filteredBy, filtersOf, type FilterReason } from '../domain/inbound-filters.ts';
import { BadRequestError, ForbiddenError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { JobPayloads, Queues } from '../queues/registry.ts';
import { makeJobGather } from '../queues/gather.ts';
import { makeSweep } from '../queues/sweep.ts';
import { attemptEntryOf, entryOf, groupJobId, jobEvent, type EventEntry } from '../queues/jobs/events.job.ts';
import type { AttemptBody } from '../store/attempts.store.ts';
import { eventKey, packPayload, type EventDoc, type EventsStore } from '../store/events.store.ts';
import type { ProjectDoc } from '../store/projects.store.ts';
import type { QuotaService } from './quota.service.ts';
import type { IngestStats } from '../state/ingest-stats.ts';
import { makeGroupCommit, type GroupWrites } from '../util/group-commit.ts';
import type { Validator } from '../validation/validator.ts';

export interface EventBody extends ErrorEventShape {
  event_id: string;
  timestamp: string;
  release?: string;
  environment?: string;
  level?: string;
  tags?: Record<string, string>;
  security?: { kind: string; actor?: string; actor_id?: string; ip?: string; user_agent?: string; outcome?: string };
  [key: string]: unknown;
}

/**
 * An event as received → the event Lookout stores: normalised (src/domain/error-event.ts), scrubbed
 * (src/domain/scrub.ts; what was filtered is noted in `_meta`), then checked against schemas/event.json,
 * so a 400 never quotes a secret. Native and envelope events alike.
 */
export function prepareEvent(validator: Validator, raw: unknown, opts: { now: Date; clientIp?: string; receivedBytes?: number; untitled?: string }): EventBody {
  if (!isObj(raw)) throw new BadRequestError('invalid_body', 'an event must be a JSON object', { errors: [{ path: '', message: 'must be an object' }] });
  const { value, filtered } = scrubEvent(normalizeEvent(raw, opts));
  const event = value as Record<string, unknown>;
  if (filtered.length > 0) event._meta = { ...(event._meta as Meta | undefined), ...Object.fromEntries(filtered.map((path) => [path, { rem: 'filtered' }])) };
  if (event.security === undefined) {
    // An error event is validated once on the hot path; only one that is not valid is repaired and checked again.
    if (validator.problems('event', event).length === 0) return event as EventBody;
    takeOutInvalid(validator, event);
    // an SDK's event whose text was all unusable is still an event (its place, tags, user...)
    if (opts.untitled && event.exception === undefined && event.message === undefined) event.message = opts.untitled;
  }
  return validator.check<EventBody>('event', event);
}

/**
 * An error event keeps what can be used (issue 46): a value of the wrong type or form is taken out and noted in
 * `_meta` (`invalid`, with the problem), as Relay does, rather than refusing the event; the event is refused only
 * when what is left cannot be used (no event_id, or nothing to show: no exception and no message). A sign-in
 * attempt is checked strictly: its fields decide who is blocked.
 */
function takeOutInvalid(validator: Validator, event: Record<string, unknown>): void {
  // a few rounds: taking out a value can leave its parent missing a member it needs
  for (let round = 0; round < 4; round++) {
    const invalid = validator.invalidValues('event', event).filter((v) => v.path !== '/event_id');
    if (invalid.length === 0) return;
    const meta = (event._meta ?? {}) as Meta;
    // the last elements of an array first, so the indexes of the others still hold
    for (const { path, problem } of invalid.sort((a, b) => laterFirst(a.path, b.path))) {
      if (takeOut(event, path)) meta[path] = { rem: 'invalid', value: problem };
    }
    event._meta = meta;
  }
}

/** Orders JSON pointers so that a later array element comes before an earlier one (`/a/10` before `/a/9`). */
function laterFirst(a: string, b: string): number {
  const [x, y] = [a.split('/'), b.split('/')];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] === y[i]) continue;
    const numeric = /^\d+$/.test(x[i]!) && /^\d+$/.test(y[i]!);
    return numeric ? Number(y[i]) - Number(x[i]) : x[i]! < y[i]! ? 1 : -1;
  }
  return y.length - x.length;
}

/** Takes the value at a JSON pointer out of its object or array; false when there is none. */
function takeOut(root: Record<string, unknown>, pointer: string): boolean {
  const keys = pointer
    .split('/')
    .slice(1)
    .map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'));
  const last = keys.pop()!;
  let parent: unknown = root;
  for (const key of keys) parent = isObj(parent) || Array.isArray(parent) ? (parent as Record<string, unknown>)[key] : undefined;
  if (Array.isArray(parent) && /^\d+$/.test(last) && Number(last) < parent.length) {
    parent.splice(Number(last), 1);
    return true;
  }
  if (isObj(parent) && Object.hasOwn(parent, last)) {
    delete parent[last];
    return true;
  }
  return false;
}

/** An event in a group commit: what is stored, what its job carries, and whether the store refused it as a duplicate. */
interface GroupItem {
  stored: { doc: EventDoc } | { attempt: AttemptBody; project: number };
  entry: EventEntry;
  duplicate?: boolean;
}

/** An error event: its own document, and what its job carries. */
function errorItem(project: number, body: EventBody, now: Date) {
  const doc: EventDoc = {
    _id: eventKey(project, body.event_id),
    project_id: project,
    event_id: body.event_id,
    batch: '',
    kind: 'error',
    fingerprint: fingerprintOf(body),
    // its JavaScript frames are mapped through source maps in the worker, before it is grouped
    ...(mapRequests(body as Obj).length > 0 && { js_frames: true as const }),
    release: body.release ?? null,
    environment: body.environment ?? null,
    company: body.tags?.company ?? null,
    at: new Date(body.timestamp),
    received_at: now,
    payload: packPayload(body),
  };
  return { stored: { doc }, entry: entryOf(doc, body) };
}

/** A sign-in attempt: packed with its group's others (src/store/attempts.store.ts), and what its job carries. */
function attemptItem(project: number, body: AttemptBody, now: Date) {
  return { stored: { attempt: body, project }, entry: attemptEntryOf(project, body, now) };
}

/** What `accept` is told of a request besides its body. */
export interface AcceptOptions {
  now: Date;
  clientIp?: string;
  receivedBytes?: number;
  /** the message of an event whose text was all unusable (an SDK's) */
  untitled?: string;
  /** `error`: the body is never a sign-in attempt */
  kind?: 'error';
  /** whether the caller has gone: then nothing is written */
  gone?: () => boolean;
}

/** The answer: the event's id, whether it was stored before, or the inbound filter that dropped it. */
export type Accepted = { id: string; duplicate: boolean; filtered?: FilterReason };

/** Most events written in one group, and gathered in one job. */
const GROUP_MAX_EVENTS = 1000;

export function makeEventsService(deps: {
  validator: Validator;
  events: EventsStore;
  queues: Queues;
  log: Logger;
  metrics: Metrics;
  stats: IngestStats;
  quota: QuotaService;
  writes: GroupWrites;
}) {
  const { events, queues, log, metrics, stats, quota } = deps;
  const jobs = makeJobGather<JobPayloads['events.process']['groups'][number]>(
    (groups) => queues.enqueue('events.process', { groups }, groupJobId(groups[0]!.id)),
    { maxWeight: GROUP_MAX_EVENTS, weight: (g) => g.events!.length, log },
  );

  const group = makeGroupCommit<GroupItem>(
    async (items) => {
      const receivedAt = new Date();
      const { id, duplicates } = await events.insertGroup(
        items.map((i) => i.stored),
        receivedAt,
      );
      items.forEach((item, i) => (item.duplicate = duplicates.has(i)));
      const stored = items.filter((i) => !i.duplicate).map((i) => jobEvent(i.entry));
      if (stored.length === 0) return events.backlog.finish([id]); // every event was stored before: nothing to apply
      // The events are durable: callers are answered now; the job is added on the side.
      jobs.add({ id, received_at: receivedAt.toISOString(), events: stored });
    },
    { maxItems: GROUP_MAX_EVENTS, ...deps.writes },
  );

  /**
   * An error event passes the project's inbound filters (a filtered one is counted and answered, never stored) and
   * its quotas (over them: a 429 to retry later); a sign-in attempt passes neither, it is never refused for being
   * many. `gone` says whether the caller has gone: then it is not written.
   */
  async function ingest(project: ProjectDoc, body: EventBody, now: Date, gone?: () => boolean): Promise<Accepted> {
    if (body.security && !project.security_monitoring) {
      throw new ForbiddenError('security_monitoring_disabled', 'security monitoring is off for this project; turn it on to send sign-in attempts');
    }
    const type = body.security ? 'security' : 'event';
    if (!body.security) {
      const filtered = filteredBy(body, filtersOf(project.filters));
      if (filtered) {
        stats.record(project._id, 'dropped', type, `filtered_${filtered}`, 1, now);
        return { id: body.event_id, duplicate: false, filtered };
      }
      quota.take(project, { category: 'error', type, now }, 1);
    }
    const item: GroupItem = body.security ? attemptItem(project._id, body as AttemptBody, now) : errorItem(project._id, body, now);
    if ((await group.add(item, gone)) === 'gone') {
      stats.record(project._id, 'dropped', type, 'client_gone', 1, now);
      return { id: body.event_id, duplicate: false };
    }
    metrics.ingest('event', item.duplicate ? 'duplicated' : 'accepted');
    // counted in the project's ingestion: an error event is an `event`, a sign-in attempt `security`
    stats.record(project._id, item.duplicate ? 'dropped' : 'accepted', type, item.duplicate ? 'duplicate' : '', 1, now);
    return { id: body.event_id, duplicate: item.duplicate === true };
  }

  return {
    /**
     * The event pipeline's one entry, for the native route and Sentry's endpoints alike: an error event of a project
     * over its quota refused before any work, the event prepared (normalised, scrubbed, checked: `prepareEvent`),
     * then filtered, counted against the quota and stored durably (`ingest`); the worker digests its group's job
     * (workers/digest/events.ts). `kind: 'error'` for a body that is never a sign-in attempt (Sentry's).
     */
    async accept(project: ProjectDoc, raw: unknown, opts: AcceptOptions): Promise<Accepted> {
      // a storm's refusals cost no more than reading them: nothing is prepared for a project already over
      if (opts.kind === 'error' || !isObj(raw) || raw.security === undefined) quota.refuseIfOver(project, { category: 'error', type: 'event', now: opts.now });
      const body = prepareEvent(deps.validator, raw, opts);
      return ingest(project, body, opts.now, opts.gone);
    },

    /**
     * What taking `raw` costs the thread, nothing written: prepared, its document and job entry made
     * (src/services/warm-up.ts runs it before the API takes requests).
     */
    rehearse(raw: unknown, now: Date): void {
      const body = prepareEvent(deps.validator, raw, { now, untitled: 'rehearsal' });
      const item = body.security ? attemptItem(0, body as AttemptBody, now) : errorItem(0, body, now);
      jobEvent(item.entry);
    },

    /** Items waiting for the next write, and the age of the oldest (admission reads it). */
    waiting: () => group.waiting(),

    /** Enqueues stored groups whose job was never added or was lost (src/queues/sweep.ts). */
    sweep: makeSweep(queues, {
      job: 'events.process',
      unprocessed: (olderThan, limit) => events.backlog.olderThan(olderThan, limit),
      jobId: groupJobId,
      // A swept job's groups are read in one query (without an index on FerretDB, one read of the collection).
      payload: (ids) => ({ groups: ids.map((id) => ({ id })) }),
      perJob: 50,
    }),

    /** Waits for writes and enqueues in flight (graceful shutdown). */
    async drain(): Promise<void> {
      await group.drain();
      await Promise.all([jobs.drain(), events.backlog.release()]);
    },
  };
}
export type EventsService = ReturnType<typeof makeEventsService>;
