/**
 * The `checkins.process` job: cron monitors' check-ins, each applied once, each monitor's in the order they were
 * stored.
 *
 * 1. gather: the groups' check-ins (a swept job reads its groups back);
 * 2. the check-ins of the same monitors in groups stored just before these and not applied yet (their job is still
 *    running, waiting for a retry, or not started): jobs run side by side, so a later group's job can run first, and
 *    a monitor moved by an `ok` before the `error` sent ahead of it would open an incident its sender had ended;
 * 3. per check-in, oldest group first, its monitor's configuration: made on first sight (Sentry's defaults), changed
 *    by a `monitor_config` that differs (src/store/checkins.store.ts);
 * 4. its monitor environment's state moved by the state machine (src/domain/monitor-state.ts) and saved once, by its
 *    stored id (src/state/monitors.state.ts): a retried job, a second worker or the earlier group's own job changes
 *    nothing twice;
 * 5. what the move changed beyond the state delivered: the run's record to the history, a failure or a recovery to
 *    the monitor's issue and its notifications (src/services/monitors.service.ts);
 * 6. the job's groups leave the backlog (an earlier group leaves it with its own job).
 */
import { applyCheckIn } from '../../src/domain/monitor-state.ts';
import { nextRun } from '../../src/domain/schedule.ts';
import type { CheckInsProcessPayload } from '../../src/queues/jobs/checkins.job.ts';
import type { MonitorsService } from '../../src/services/monitors.service.ts';
import type { MonitorsState } from '../../src/state/monitors.state.ts';
import { storedCheckInId, type CheckInsStore, type ReceivedCheckIn } from '../../src/store/checkins.store.ts';

/** Most earlier groups looked at: jobs overtake each other by a few (the worker's concurrency, a retry's wait). */
const EARLIER_GROUPS = 100;

interface StoredGroup {
  id: string;
  receivedAt: number;
  checkins: ReceivedCheckIn[];
}

export interface CheckInsProcessDeps {
  stores: { checkins: CheckInsStore };
  monitorsState: MonitorsState;
  monitors: Pick<MonitorsService, 'deliver'>;
}

const monitorOf = (r: ReceivedCheckIn) => `${r.project_id}\n${r.check_in.slug}\n${r.check_in.environment}`;

export async function processCheckIns(payload: CheckInsProcessPayload, deps: CheckInsProcessDeps, now: Date): Promise<{ checkIns: number }> {
  const { checkins: store } = deps.stores;
  // 1. the groups' check-ins, with when each group was received (a marker whose group was never written: its caller
  // was not answered, and it has none)
  const own = await storedGroups(store, payload.groups);
  const ids = new Set(payload.groups.map((g) => g.id));
  // 2. earlier groups' check-ins of the same monitors, not applied yet
  const monitors = new Set(own.flatMap((g) => g.checkins.map(monitorOf)));
  const last = [...ids].sort().at(-1)!;
  const earlierIds = monitors.size ? (await store.backlog.before(last, EARLIER_GROUPS)).map((m) => m._id).filter((id) => !ids.has(id)) : [];
  const earlier = (await storedGroups(store, earlierIds.map((id) => ({ id })))).map((g) => ({ ...g, checkins: g.checkins.map((c) => (monitors.has(monitorOf(c)) ? c : null)) }));
  // 3–5. each check-in once, in the order stored
  let count = 0;
  for (const group of [...earlier, ...own].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    for (const [index, received] of group.checkins.entries()) {
      if (received === null) continue;
      await applyOne(deps, storedCheckInId(group.id, index), received, group.receivedAt, now);
      if (ids.has(group.id)) count += 1;
    }
  }
  // 6. the groups leave the backlog: applied, their job is no longer swept
  await store.backlog.finish([...ids]);
  return { checkIns: count };
}

/** Groups as a job names them: carried whole, or (a swept job, an earlier group) read back by id. */
async function storedGroups(store: CheckInsStore, groups: CheckInsProcessPayload['groups']): Promise<StoredGroup[]> {
  const unread = groups.filter((g) => !('checkins' in g) || !g.checkins).map((g) => g.id);
  const read = new Map((unread.length ? await store.ofGroups(unread) : []).map((g) => [g._id, { received_at: g.received_at.toISOString(), checkins: g.checkins }]));
  return groups.flatMap((group) => {
    const found = 'checkins' in group && group.checkins ? { received_at: group.received_at, checkins: group.checkins } : read.get(group.id);
    return found ? [{ id: group.id, receivedAt: Date.parse(found.received_at), checkins: found.checkins }] : [];
  });
}

async function applyOne(deps: CheckInsProcessDeps, id: string, received: ReceivedCheckIn, receivedAt: number, now: Date): Promise<void> {
  const { project_id: project, check_in: checkIn } = received;
  // 2. the monitor's configuration
  const monitor = await deps.stores.checkins.upsertMonitor(project, checkIn.slug, checkIn.config, now);
  // 3. its state, once
  const ref = { project, slug: checkIn.slug, environment: checkIn.environment };
  const saved = await deps.monitorsState.update(ref, { checkIn: id }, (state) => applyCheckIn(state, monitor.config, checkIn, receivedAt, nextRun, id.replace(/[^0-9a-z]/gi, '')));
  // 4. what it changed
  if (saved) await deps.monitors.deliver(ref, saved.outbox, now, monitor);
}
