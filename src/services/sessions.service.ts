/**
 * Session ingestion (spec 4.4). A request is read into session updates and
 * aggregates (entries that break a rule are skipped), then written with the
 * other requests arriving at the same moment as one raw batch (journaled:
 * its backlog marker, then the batch), and answered 202. The batches stored
 * within 25 ms go to a worker in one BullMQ job (src/queues/gather.ts) that
 * carries them; when Redis is unavailable the markers stay on the backlog
 * and the sweeper enqueues the batches later, so nothing acknowledged is
 * lost.
 */
import crypto from 'node:crypto';
import {
  readAggregate,
  readSession,
  total,
  type AggregateEntry,
  type AggregateUpdate,
  type EntryDefaults,
  type EntryError,
  type HashDid,
  type SessionEntry,
  type SessionUpdate,
} from '../domain/sessions.ts';
import { BadRequestError } from '../errors.ts';
import type { IngestStats } from '../state/ingest-stats.ts';
import type { QuotaService } from './quota.service.ts';
import type { ProjectDoc } from '../store/projects.store.ts';
import type { Validator } from '../validation/validator.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { Logger } from '../log.ts';
import type { Queues } from '../queues/registry.ts';
import { makeJobGather } from '../queues/gather.ts';
import { makeSweep } from '../queues/sweep.ts';
import { packRequest, type JobBatch, type SessionsStore } from '../store/sessions.store.ts';
import { makeGroupCommit, type GroupWrites } from '../util/group-commit.ts';
import { batchJobId } from '../queues/jobs/sessions.job.ts';

/** A skipped entry as the answer names it: its index in the list, and why (its first problem; all in `message`). */
export interface SkippedEntry {
  index: number;
  reason: EntryError['reason'];
  path: string;
  message: string;
}

/** What a body holds once read: the updates to store and what was skipped. */
export interface ReadSessions {
  sessions: SessionUpdate[];
  aggregates: AggregateUpdate[];
  /** sessions represented: one per session entry, the sum of the counts of aggregate items */
  accepted: number;
  skipped: SkippedEntry[];
}

/** How many skipped entries a 202 names (the count covers all of them). */
const SKIPPED_SHOWN = 10;

export interface SessionsBody extends SessionEntry, EntryDefaults {
  sessions?: unknown[];
  aggregates?: unknown[];
}

/** How many user ids' hashes the API keeps: a user sends many sessions, and an HMAC costs more than the rest of one. */
const DID_HASHES_KEPT = 50_000;

/**
 * The key of `did` hashes: HMAC-SHA256 over project and user id, first 16 hex characters. The latest
 * DID_HASHES_KEPT are kept in memory (the oldest go first); nothing of them is stored.
 */
export function makeDidHasher(key: string): (project: number) => HashDid {
  const kept = new Map<string, string>();
  return (project) => (did) => {
    const input = `${project}:${did}`;
    let hash = kept.get(input);
    if (hash === undefined) {
      hash = crypto.createHmac('sha256', key).update(input).digest('hex').slice(0, 16);
      if (kept.size >= DID_HASHES_KEPT) kept.delete(kept.keys().next().value!);
      kept.set(input, hash);
    }
    return hash;
  };
}

/** Most sessions written in one raw batch document, and gathered in one job. */
const GROUP_MAX_SESSIONS = 2000;

export function makeSessionsService(deps: {
  store: SessionsStore;
  stats: IngestStats;
  quota: QuotaService;
  queues: Queues;
  validator: Validator;
  hashDid: (project: number) => HashDid;
  log: Logger;
  metrics: Metrics;
  windowMs: number;
  /** how raw batches are written: how many at once, how long an idle writer waits for more (src/runtime.ts) */
  writes: GroupWrites;
}) {
  const { store, queues, validator, log, metrics } = deps;
  const entries = (r: { sessions: SessionUpdate[]; aggregates: AggregateUpdate[] }) => r.sessions.length + r.aggregates.length;
  const jobs = makeJobGather<{ batch: JobBatch; entries: number }>(
    (stored) => queues.enqueue('sessions.process', { batches: stored.map(({ batch }) => batch) }, batchJobId(stored[0]!.batch.id)),
    { maxWeight: GROUP_MAX_SESSIONS, weight: (s) => s.entries, log },
  );

  const group = makeGroupCommit<{ project: number; sessions: SessionUpdate[]; aggregates: AggregateUpdate[] }>(
    async (requests) => {
      const batch = await store.insertBatch(requests.map((r) => packRequest(r.project, r.sessions, r.aggregates)));
      // The batch is durable: callers are answered now; the job is added on the side.
      jobs.add({ batch, entries: requests.reduce((n, r) => n + entries(r), 0) });
    },
    {
      maxItems: GROUP_MAX_SESSIONS,
      ...deps.writes,
      weight: entries,
    },
  );

  /** Each entry checked against its schema, then read; a skipped one is named by index, path (in the body) and reason. */
  function readEntries<E, U>(list: unknown[], at: string, schema: string, readOne: (entry: E) => U | EntryError[], into: U[], skipped: SkippedEntry[]) {
    list.forEach((entry, index) => {
      const where = `${at}${at ? `/${index}` : ''}`;
      const invalid: EntryError[] = validator.problems(schema, entry).map((p) => ({ ...p, reason: 'invalid_entry' }));
      const read = invalid.length ? invalid : readOne(entry as E);
      if (!Array.isArray(read)) {
        into.push(read);
        return;
      }
      const path = (p: EntryError) => `${where}${p.path === '/' ? '' : p.path}` || '/';
      skipped.push({ index, reason: read[0]!.reason, path: path(read[0]!), message: read.map((p) => `${path(p)}: ${p.message}`).join('; ') });
    });
  }

  const service = {
    /**
     * The session pipeline's one entry for a request of sessions: its entries read (`read`), then counted against
     * the quota and stored durably (`ingest`); the worker digests the batch's job (workers/digest/sessions.ts). An
     * envelope reads each of its session items and stores them together.
     */
    accept(project: ProjectDoc, value: unknown, opts: { now: Date; gone?: () => boolean }) {
      return service.ingest(project, service.read(project._id, value, opts.now), opts.gone);
    },

    /**
     * Reads any of the three body forms (and Sentry's session shapes). Throws
     * a 400 when the body's shape is wrong or no entry is left to store.
     */
    read(project: number, value: unknown, now: Date): ReadSessions {
      const body = validator.check<SessionsBody>('sessions', value);
      const hashDid = deps.hashDid(project);
      const out: ReadSessions = { sessions: [], aggregates: [], accepted: 0, skipped: [] };
      if (body.aggregates) {
        const defaults: EntryDefaults = { release: body.release ?? body.attrs?.release, environment: body.environment ?? body.attrs?.environment };
        readEntries<AggregateEntry, AggregateUpdate>(body.aggregates, '/aggregates', 'session-aggregate', (e) => readAggregate(e, now, hashDid, defaults, deps.windowMs), out.aggregates, out.skipped);
      } else {
        const list = body.sessions ?? [body];
        readEntries<SessionEntry, SessionUpdate>(list, body.sessions ? '/sessions' : '', 'session', (e) => readSession(e, now, hashDid, {}, deps.windowMs), out.sessions, out.skipped);
      }
      out.accepted = out.sessions.length + out.aggregates.reduce((n, a) => n + total(a.counts), 0);
      metrics.ingest('session', 'rejected', out.skipped.length);
      if (out.sessions.length === 0 && out.aggregates.length === 0) {
        throw new BadRequestError('no_valid_sessions', `no entry could be stored: ${out.skipped[0]?.message ?? 'the list is empty'}`, {
          errors: out.skipped,
        });
      }
      return out;
    },

    /**
     * Stores what was read (durably) and answers how many sessions it stands for; over the project's sessions
     * quota nothing is stored (429). `gone` says whether the caller has gone: then it is not written.
     */
    async ingest(project: ProjectDoc, read: ReadSessions, gone?: () => boolean): Promise<{ accepted: number; skipped: number; skipped_entries?: SkippedEntry[] }> {
      const id = project._id;
      deps.quota.take(project, { category: 'session', type: 'session' }, read.accepted);
      if ((await group.add({ project: id, sessions: read.sessions, aggregates: read.aggregates }, gone)) === 'gone') {
        deps.stats.record(id, 'dropped', 'session', 'client_gone', read.accepted);
        return { accepted: 0, skipped: read.skipped.length };
      }
      metrics.ingest('session', 'accepted', read.accepted);
      deps.stats.record(id, 'accepted', 'session', '', read.accepted);
      deps.stats.record(id, 'dropped', 'session', 'invalid', read.skipped.length);
      const skipped = read.skipped.length;
      return { accepted: read.accepted, skipped, ...(skipped ? { skipped_entries: read.skipped.slice(0, SKIPPED_SHOWN) } : {}) };
    },

    /** What taking `value` costs the thread, nothing written: read and packed (src/services/warm-up.ts). */
    rehearse(value: unknown, now: Date): void {
      const { sessions, aggregates, skipped } = service.read(0, value, now);
      // a rehearsal takes the way of valid entries; one that skips any rehearses the wrong thing
      if (skipped.length) throw new Error(`a rehearsed session was skipped: ${skipped[0]!.message}`);
      packRequest(0, sessions, aggregates);
    },

    /** Items waiting for the next write, and the age of the oldest (admission reads it). */
    waiting: () => group.waiting(),

    /** Enqueues stored batches whose job was never added or was lost (src/queues/sweep.ts). */
    sweep: makeSweep(queues, {
      job: 'sessions.process',
      unprocessed: (olderThan, limit) => store.backlog.olderThan(olderThan, limit),
      jobId: batchJobId,
      // A swept job's batches are read by id, one after another.
      payload: (ids) => ({ batches: ids.map((id) => ({ id })) }),
      perJob: 20,
    }),

    /** Waits for writes and enqueues in flight (graceful shutdown). */
    async drain(): Promise<void> {
      await group.drain();
      await Promise.all([jobs.drain(), store.backlog.release()]);
    },
  };
  return service;
}
export type SessionsService = ReturnType<typeof makeSessionsService>;
