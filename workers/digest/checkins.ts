/**
 * The `checkins.process` job: cron monitors' check-ins, each applied once, a group's in the order they were
 * received. Jobs run side by side, so a later group's can run first: each check-in carries its place in the order
 * stored, and the state machine answers a late one (src/domain/monitor-state.ts).
 *
 * 1. gather: the groups' check-ins (a swept job reads its groups back);
 * 2. per check-in, its monitor's configuration: made on first sight (Sentry's defaults), changed by a
 *    `monitor_config` that differs (src/store/checkins.store.ts);
 * 3. its monitor environment's state moved by the state machine (src/domain/monitor-state.ts) and saved once, by its
 *    stored id (src/state/monitors.state.ts): a retried job or a second worker changes nothing twice;
 * 4. what the move changed beyond the state delivered: the run's record to the history, a failure or a recovery to
 *    the monitor's issue and its notifications (src/services/monitors.service.ts);
 * 5. the groups leave the backlog.
 */
import { applyCheckIn, type CheckInPlace } from '../../src/domain/monitor-state.ts';
import { nextRun } from '../../src/domain/schedule.ts';
import type { CheckInsProcessPayload } from '../../src/queues/jobs/checkins.job.ts';
import type { MonitorsService } from '../../src/services/monitors.service.ts';
import type { MonitorsState } from '../../src/state/monitors.state.ts';
import { checkInOrder, storedCheckInId, type CheckInsStore, type ReceivedCheckIn } from '../../src/store/checkins.store.ts';

export interface CheckInsProcessDeps {
  stores: { checkins: CheckInsStore };
  monitorsState: MonitorsState;
  monitors: Pick<MonitorsService, 'deliver'>;
}

export async function processCheckIns(payload: CheckInsProcessPayload, deps: CheckInsProcessDeps, now: Date): Promise<{ checkIns: number }> {
  const { checkins: store } = deps.stores;
  // 1. the groups' check-ins, with their stored ids and when their group was received
  const swept = payload.groups.filter((g) => !('checkins' in g) || !g.checkins).map((g) => g.id);
  const read = new Map((swept.length ? await store.ofGroups(swept) : []).map((g) => [g._id, { received_at: g.received_at.toISOString(), checkins: g.checkins }]));
  let count = 0;
  for (const group of payload.groups) {
    const found = 'checkins' in group && group.checkins ? { received_at: group.received_at, checkins: group.checkins } : read.get(group.id);
    if (!found) continue; // a marker whose group was never written: its caller was not answered
    const receivedAt = Date.parse(found.received_at);
    for (const [index, received] of found.checkins.entries()) {
      await applyOne(deps, storedCheckInId(group.id, index), received, { at: receivedAt, order: checkInOrder(group.id, index) }, now);
      count += 1;
    }
  }
  // 5. the groups leave the backlog: applied, their job is no longer swept
  await store.backlog.finish(payload.groups.map((g) => g.id));
  return { checkIns: count };
}

async function applyOne(deps: CheckInsProcessDeps, id: string, received: ReceivedCheckIn, place: CheckInPlace, now: Date): Promise<void> {
  const { project_id: project, check_in: checkIn } = received;
  // 2. the monitor's configuration
  const monitor = await deps.stores.checkins.upsertMonitor(project, checkIn.slug, checkIn.config, now);
  // 3. its state, once
  const ref = { project, slug: checkIn.slug, environment: checkIn.environment };
  const saved = await deps.monitorsState.update(ref, { checkIn: id }, (state) => applyCheckIn(state, monitor.config, checkIn, place, nextRun, id.replace(/[^0-9a-z]/gi, '')));
  // 4. what it changed
  if (saved) await deps.monitors.deliver(ref, saved.outbox, now, monitor);
}
