/**
 * The check-in pipeline's one entry (issue 68): a check-in from the `/cron/` endpoint or an envelope's `check_in`
 * item is read (`src/domain/checkins.ts`: a bad one names its field), held to a few a minute per monitor (Sentry's
 * 6; more are counted as dropped), and stored durably with the others that arrived together; the group's
 * `checkins.process` job is added on the side and the worker applies it (workers/digest/checkins.ts).
 */
import { CheckInError, monitorSlug, readCheckIn, readCheckInQuery, readPing, type CheckIn } from '../domain/checkins.ts';
import { BadRequestError } from '../errors.ts';
import { validCrontab } from '../domain/schedule.ts';
import type { Logger } from '../log.ts';
import { makeJobGather } from '../queues/gather.ts';
import { checkInsJobId } from '../queues/jobs/checkins.job.ts';
import type { Queues } from '../queues/registry.ts';
import { makeSweep } from '../queues/sweep.ts';
import type { IngestStats } from '../state/ingest-stats.ts';
import type { CheckInsStore, JobCheckIns, ReceivedCheckIn } from '../store/checkins.store.ts';
import type { ProjectDoc } from '../store/projects.store.ts';
import { makeGroupCommit, type GroupWrites } from '../util/group-commit.ts';
import { makeSlidingLimit } from '../util/sliding-limit.ts';

/** Check-ins a monitor may send a minute, as Sentry's (CHECKIN_QUOTA_LIMIT); more are dropped and counted. */
export const CHECKINS_PER_MINUTE = 6;
/** Most check-ins stored in one group, and gathered in one job. */
const GROUP_MAX = 500;

/** A check-in as it came, read; one that cannot be used is a 400 naming its field. */
function readInput(input: CheckInInput): CheckIn {
  try {
    if ('signal' in input) return readPing(input.signal, input.query, monitorSlug(input.slug, 'slug'));
    if ('query' in input) return readCheckInQuery(input.query, monitorSlug(input.slug, 'slug'));
    return readCheckIn(input.body, { slug: input.slug === undefined ? undefined : monitorSlug(input.slug, 'slug'), validCrontab });
  } catch (err) {
    if (err instanceof CheckInError) throw new BadRequestError('invalid_check_in', err.message, { errors: [{ path: err.path, message: err.message }] });
    throw err;
  }
}

/** How a check-in came: an envelope item or the `/cron/` endpoint's JSON body, that endpoint's query, or a heartbeat's ping. */
export type CheckInInput = { body: unknown; slug?: string } | { query: Record<string, unknown>; slug: string } | { signal: string; query: Record<string, unknown>; slug: string };

export function makeCheckInsService(deps: { store: CheckInsStore; queues: Queues; stats: IngestStats; log: Logger; writes: GroupWrites }) {
  const { store, queues, stats, log } = deps;
  const jobs = makeJobGather<JobCheckIns>((groups) => queues.enqueue('checkins.process', { groups }, checkInsJobId(groups[0]!.id)), {
    maxWeight: GROUP_MAX,
    weight: (g) => g.checkins?.length ?? 1,
    log,
  });
  const group = makeGroupCommit<ReceivedCheckIn>(
    async (items) => {
      // stored: the callers are answered now, the job added on the side
      jobs.add(await store.insertGroup(items));
    },
    { maxItems: GROUP_MAX, ...deps.writes },
  );

  /** Each monitor's check-ins in this process's last minute. */
  const perMonitor = makeSlidingLimit(CHECKINS_PER_MINUTE, 60_000);
  const overRate = (project: number, checkIn: CheckIn, now: Date) => !perMonitor.take(`${project}:${checkIn.slug}`, now.getTime());

  return {
    /**
     * Reads, limits and stores one check-in. Answers `stored`, `rate_limited` (counted as dropped; Relay answers
     * 202 either way) or `gone` (the sender left before it was written). A check-in that cannot be used is a 400
     * `invalid_check_in` naming its field; a path's slug is made one first.
     */
    async accept(project: ProjectDoc, input: CheckInInput, opts: { now: Date; gone?: () => boolean }): Promise<'stored' | 'rate_limited' | 'gone'> {
      const checkIn = readInput(input);
      if (overRate(project._id, checkIn, opts.now)) {
        stats.record(project._id, 'dropped', 'check_in', 'rate_limited', 1, opts.now);
        return 'rate_limited';
      }
      if ((await group.add({ project_id: project._id, check_in: checkIn }, opts.gone)) === 'gone') {
        stats.record(project._id, 'dropped', 'check_in', 'client_gone', 1, opts.now);
        return 'gone';
      }
      stats.record(project._id, 'accepted', 'check_in', '', 1, opts.now);
      return 'stored';
    },

    /** Items waiting for the next write, and the age of the oldest (admission reads it). */
    waiting: () => group.waiting(),

    /** Enqueues stored groups whose job was never added or was lost (src/queues/sweep.ts). */
    sweep: makeSweep(queues, {
      job: 'checkins.process',
      unprocessed: (olderThan, limit) => store.backlog.olderThan(olderThan, limit),
      jobId: checkInsJobId,
      payload: (ids) => ({ groups: ids.map((id) => ({ id })) }),
      perJob: 50,
    }),

    /** Waits for writes and enqueues in flight (graceful shutdown). */
    async drain(): Promise<void> {
      await group.drain();
      await Promise.all([jobs.drain(), store.backlog.release()]);
    },
  };
}
export type CheckInsService = ReturnType<typeof makeCheckInsService>;
