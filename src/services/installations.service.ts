/**
 * Bound installations watched (issue 68): each API process records when a project's installation was heard from
 * (a config poll, another request with its key and instance) at most every HEARD_EVERY_MS per project; the
 * monitors' clock judges each minute whether one went silent or was heard again (src/domain/installations.ts), and
 * records it in the installation's issue (src/services/incidents.service.ts).
 */
import { DEFAULT_SILENT_MINUTES, installationIncident, judgeSilence } from '../domain/installations.ts';
import type { InstallationsState } from '../state/installations.state.ts';
import type { ProjectsStore } from '../store/projects.store.ts';
import { cachedFor } from '../util/cached.ts';
import type { IncidentsService } from './incidents.service.ts';

/** How often one process records a project's installation heard (a silence is judged in minutes). */
const HEARD_EVERY_MS = 10_000;
/** Most projects judged a minute. */
const MAX_PER_MINUTE = 10_000;
/** The longest user agent kept. */
const SDK_LENGTH = 200;

export function makeInstallationsService(deps: { state: InstallationsState; projects: ProjectsStore; incidents?: IncidentsService }) {
  const { state, projects } = deps;
  const recorded = new Map<string, number>();
  /**
   * A project's binding and setting, read at most once a minute: nearly every bound project is quiet for a minute
   * between two polls, so each minute's watch would otherwise read them all from the database.
   */
  const projectOf = cachedFor(60_000, (id: number) => projects.get(id));

  return {
    /** The project's installation `instance` was heard now; recorded unless this process did so lately. */
    async heard(project: number, instance: string, kind: 'poll' | 'ingest', now: number, sdk: string | null): Promise<void> {
      const key = `${project}:${kind}`;
      if (now - (recorded.get(key) ?? 0) < HEARD_EVERY_MS) return;
      recorded.set(key, now);
      if (recorded.size > 100_000) recorded.clear();
      await state.heard(project, instance, kind, now, sdk?.slice(0, SDK_LENGTH) ?? null);
    },

    /** The clock's minute (ms): installations gone silent are reported, those heard again resolved. */
    async watch(minute: number, heardAll: (from: number, to: number) => boolean): Promise<void> {
      const candidates = new Set([...(await state.quietSince(minute - 60_000, MAX_PER_MINUTE)), ...(await state.silent())]);
      for (const id of candidates) {
        const heard = await state.read(id);
        let project = await projectOf(id);
        // a binding that seems to have changed is read again: the cached one may be a minute old
        if (project?.instance_id !== heard.instance) project = await projects.get(id);
        if (!project?.instance_id || heard.instance !== project.instance_id) {
          // unbound, or bound to another installation since: no longer watched (the new one is, once heard)
          await state.forget(id);
          continue;
        }
        const minutes = project.silent_after_minutes ?? DEFAULT_SILENT_MINUTES;
        const silence = judgeSilence(heard, minutes, minute, heardAll);
        if (!silence) continue;
        // recorded first, then the state: a worker that dies between records the same change again, counted once
        await deps.incidents?.record(id, installationIncident(project.instance_id, silence, minute, minutes), new Date(minute));
        await state.setSilent(id, silence.kind === 'silent' ? silence.since : null);
      }
    },

    /** The project's installation as the Monitors page shows it: what it reported at activation, and when it was last heard. */
    async view(id: number) {
      const project = await projects.get(id);
      const installation = project?.installation ?? null;
      if (!project || !installation) return { installation: null };
      const heard = await state.read(id);
      const same = heard.instance === installation.instance_id;
      const at = (ms: number | null) => (same && ms !== null ? new Date(ms).toISOString() : null);
      return {
        installation: {
          ...installation,
          sdk: same ? heard.sdk : null,
          last_poll: at(heard.poll),
          last_request: at(heard.ingest),
          silent_since: at(heard.silent),
          silent_after_minutes: project.silent_after_minutes ?? DEFAULT_SILENT_MINUTES,
        },
      };
    },
  };
}
export type InstallationsService = ReturnType<typeof makeInstallationsService>;
