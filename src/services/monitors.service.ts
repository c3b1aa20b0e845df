/**
 * What a monitor's move changed beyond its state, delivered (src/state/monitors.state.ts keeps it in the state's
 * outbox until then): its check-in records written to the history, its effects recorded in the monitor's issue
 * (src/services/incidents.service.ts), then the outbox settled. Each part is idempotent, so an outbox delivered twice
 * (a worker that died before settling, found again by the clock) counts and sends nothing twice.
 */
import { monitorIncident } from '../domain/incidents.ts';
import { afterWindow, heldAt, inWindow } from '../domain/maintenance.ts';
import { windowOf, type MaintenanceStore } from '../store/maintenance.store.ts';
import { cachedFor } from '../util/cached.ts';
import type { MonitorOutboxItem, MonitorRef, MonitorsState } from '../state/monitors.state.ts';
import type { CheckInsStore, MonitorDoc } from '../store/checkins.store.ts';
import type { IncidentsService } from './incidents.service.ts';

/** An outbox left this long is taken as a dead worker's, and delivered by the clock. */
export const LEFT_OVER_MS = 30_000;

export function makeMonitorsService(deps: { state: MonitorsState; store: CheckInsStore; incidents: IncidentsService; maintenance: MaintenanceStore }) {
  const { state, store, incidents } = deps;
  /** A project's maintenance windows, read at most every 5 s (a new window holds within 5 s). */
  const windowsOf = cachedFor(5000, async (project: number) => (await deps.maintenance.ofProject(project)).map(windowOf));

  /**
   * `known`: the monitor, when the caller read it already. What a maintenance window still open covers stays in the
   * outbox (its records written); once the window ended, what it held is reported as the state stands
   * (src/domain/maintenance.ts' afterWindow).
   */
  async function deliver(ref: MonitorRef, outbox: MonitorOutboxItem[], now: Date, known?: MonitorDoc): Promise<void> {
    if (outbox.length === 0) return;
    const monitor = known ?? (await store.monitor(ref.project, ref.slug)) ?? { slug: ref.slug, name: ref.slug };
    const windows = await windowsOf(ref.project);
    const held = outbox.filter((i) => i.effects.some((e) => heldAt(windows, ref.slug, e.at, now.getTime())));
    const released = outbox.filter((i) => !held.includes(i));
    for (const item of outbox) await store.saveRecords(ref.project, ref.slug, ref.environment, item.records);
    // a paused monitor's runs are recorded, and raise nothing
    if (!('paused' in monitor && monitor.paused)) {
      const effects = released.flatMap((i) => i.effects);
      const windowed = effects.filter((e) => inWindow(windows, ref.slug, e.at));
      const reported = windowed.length ? [...effects.filter((e) => !windowed.includes(e)), ...afterWindow(windowed, (await state.read(ref)).incident !== null)].sort((a, b) => a.at - b.at) : effects;
      for (const effect of reported) await incidents.record(ref.project, monitorIncident(monitor, ref.environment, effect), now);
    }
    await state.settle(
      ref,
      released.map((i) => i.key),
    );
  }

  return {
    deliver,
    /**
     * Retention (the hourly maintenance job): runs that began more than `days` ago go, and the groups of check-ins
     * received more than two days ago (applied long since).
     */
    async expire(now: Date, days: number): Promise<{ check_in_runs: number; check_in_groups: number }> {
      let runs = 0;
      const before = now.getTime() - days * 86_400_000;
      for (const project of await state.projects()) {
        for (const ref of await state.refs(project)) runs += await store.forgetHistory(project, ref.slug, ref.environment, before);
      }
      return { check_in_runs: runs, check_in_groups: await store.forgetGroups(now.getTime() - 2 * 86_400_000) };
    },
    /** Delivers the outboxes left by workers that died before delivering them (the clock calls this each turn). */
    async deliverLeftOver(now: Date, limit = 1000): Promise<number> {
      let delivered = 0;
      for (const project of await state.projects()) {
        for (const { ref, outbox } of await state.unsettled(project, now.getTime() - LEFT_OVER_MS, limit)) {
          await deliver(ref, outbox, now);
          delivered += 1;
        }
      }
      return delivered;
    },
  };
}
export type MonitorsService = ReturnType<typeof makeMonitorsService>;
