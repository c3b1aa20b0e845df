/**
 * Monitors as people see and manage them (the dashboard's Monitors page, `lookout admin monitor …`): each monitor
 * with its environments' states, its next five expected runs in its time zone and its newest runs; made or changed,
 * paused, resumed and removed by a person.
 */
import { CheckInError, MONITOR_DEFAULTS, monitorSlug, readMonitorConfig, type MonitorConfig } from '../domain/checkins.ts';
import { expectNothing, type MonitorEnvState } from '../domain/monitor-state.ts';
import { nextRuns, validCrontab } from '../domain/schedule.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { MonitorsState } from '../state/monitors.state.ts';
import type { CheckInRecordDoc, CheckInsStore, MonitorDoc } from '../store/checkins.store.ts';
import type { MaintenanceDoc, MaintenanceStore } from '../store/maintenance.store.ts';
import { readWindow, WindowInputError } from '../domain/maintenance.ts';

/** Runs of each environment a monitor's page shows. */
const HISTORY = 50;
const MAX_NAME = 128;

export interface MonitorView {
  slug: string;
  name: string;
  config: MonitorConfig;
  paused: boolean;
  /** the next five runs the schedule expects (ISO times), none without a schedule */
  next_runs: string[];
  environments: { environment: string; state: MonitorEnvState; runs?: Omit<CheckInRecordDoc, '_id' | 'project_id' | 'monitor' | 'environment'>[] }[];
  created_at: Date;
}

/** A monitor's name and configuration as a person sends them: `{slug, name?, config?}`. */
function readMonitorInput(body: unknown): { slug: string; name: string | null; config: Partial<MonitorConfig> } {
  try {
    const b = (body ?? {}) as Record<string, unknown>;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new CheckInError('', 'must be a JSON object');
    const slug = monitorSlug(b.slug, '/slug');
    if (b.name !== undefined && (typeof b.name !== 'string' || b.name.trim() === '' || b.name.length > MAX_NAME)) {
      throw new CheckInError('/name', `must be a name of 1 to ${MAX_NAME} characters`);
    }
    const config = b.config === undefined ? {} : readMonitorConfig(b.config, '/config', validCrontab);
    return { slug, name: typeof b.name === 'string' ? b.name.trim() : null, config };
  } catch (err) {
    if (err instanceof CheckInError) throw new BadRequestError('invalid_monitor', err.message, { errors: [{ path: err.path, message: err.message }] });
    throw err;
  }
}

export function makeMonitorsAdmin(deps: { state: MonitorsState; store: CheckInsStore; maintenance: MaintenanceStore }) {
  const { state, store } = deps;
  const windowView = (d: MaintenanceDoc) => ({ id: String(d.id), from: d.from.toISOString(), to: d.to.toISOString(), monitor: d.monitor });

  /** A monitor as shown, from its project's states read once (`states`, by slug). */
  async function view(project: number, m: MonitorDoc, states: Map<string, MonitorView['environments']>, now: Date, withRuns: boolean): Promise<MonitorView> {
    const environments = states.get(m.slug) ?? [];
    return {
      slug: m.slug,
      name: m.name,
      config: m.config,
      paused: m.paused === true,
      next_runs: nextRuns(m.config, now.getTime(), 5).map((t) => new Date(t).toISOString()),
      environments: await Promise.all(
        environments.map(async (e) => ({
          ...e,
          ...(withRuns
            ? { runs: (await store.history(project, m.slug, e.environment, HISTORY)).map(({ _id, project_id, monitor, environment, ...run }) => run) }
            : {}),
        })),
      ),
      created_at: m.created_at,
    };
  }
  async function found(project: number, slug: string): Promise<MonitorDoc> {
    const m = await store.monitor(project, slug);
    if (!m) throw new NotFoundError('monitor_not_found', `project ${project} has no monitor ${slug}`);
    return m;
  }

  return {
    async list(project: number, now: Date): Promise<{ monitors: MonitorView[] }> {
      const states = await state.environments(project);
      return { monitors: await Promise.all((await store.monitorsOf(project)).map((m) => view(project, m, states, now, false))) };
    },
    async show(project: number, slug: string, now: Date): Promise<MonitorView> {
      return view(project, await found(project, slug), await state.environments(project), now, true);
    },
    /** Makes a monitor, or changes one: what the body names is set, the rest kept (a new one starts from Sentry's defaults). */
    async set(project: number, body: unknown, now: Date): Promise<MonitorView> {
      const input = readMonitorInput(body);
      const was = await store.monitor(project, input.slug);
      const saved = await store.setMonitor(project, input.slug, { name: input.name ?? was?.name ?? input.slug, config: { ...(was?.config ?? MONITOR_DEFAULTS), ...input.config } }, now);
      return view(project, saved, await state.environments(project), now, false);
    },
    /**
     * Pauses a monitor (its check-ins still recorded, nothing missed or raised), or resumes it: nothing is expected
     * of a resumed monitor until its next check-in, so the time it was paused is not a miss.
     */
    async setPaused(project: number, slug: string, paused: boolean, now: Date): Promise<MonitorView> {
      await found(project, slug);
      if (!paused) {
        for (const { environment } of (await state.environments(project)).get(slug) ?? []) {
          await state.update({ project, slug, environment }, { checkIn: `resume:${now.getTime()}` }, expectNothing);
        }
      }
      return view(project, (await store.setPaused(project, slug, paused, now))!, await state.environments(project), now, false);
    },
    /** Adds a maintenance window (src/domain/maintenance.ts) for the project's monitors, or one of them. */
    async addWindow(project: number, body: unknown, now: Date) {
      let w;
      try {
        w = readWindow(body);
      } catch (err) {
        if (err instanceof WindowInputError) throw new BadRequestError('invalid_window', err.message, { errors: [{ path: err.path, message: err.message }] });
        throw err;
      }
      if (w.monitor !== null) w = { ...w, monitor: (await found(project, monitorSlug(w.monitor, '/monitor'))).slug };
      return windowView(await deps.maintenance.add(project, w, now));
    },
    async windows(project: number) {
      return { windows: (await deps.maintenance.ofProject(project)).map(windowView) };
    },
    async removeWindow(project: number, id: number) {
      if (!(await deps.maintenance.remove(project, id))) throw new NotFoundError('window_not_found', `project ${project} has no maintenance window ${id}`);
      return { removed: String(id) };
    },
    async remove(project: number, slug: string): Promise<{ removed: string }> {
      await found(project, slug);
      await state.forget(project, slug);
      await store.removeMonitor(project, slug);
      return { removed: slug };
    },
  };
}
export type MonitorsAdmin = ReturnType<typeof makeMonitorsAdmin>;
