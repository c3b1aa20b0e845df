/**
 * The Releases page (issue 3, item 4): per (release, environment) sessions
 * and users by final status, crash-free rates and adoption, plus an hourly
 * series for one release. Rates are numbers from 0 to 1, null when there is
 * nothing to divide.
 */
import { withTotal, type HourRollup, type ReleaseRollup } from '../domain/release-health.ts';
import { freeRate, hourOf, share, total, type StatusCounts } from '../domain/sessions.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { SessionsStore } from '../store/sessions.store.ts';

const ADOPTION_WINDOW_MS = 24 * 3600 * 1000;

interface Adoption {
  /** per environment, per release: sessions and users started in the window */
  byRelease: Map<string, { sessions: number; users: number }>;
  byEnvironment: Map<string, { sessions: number; users: number }>;
}

const pairKey = (environment: string, release: string) => JSON.stringify([environment, release]);

function rates(sessions: StatusCounts, users: StatusCounts) {
  const s = withTotal(sessions);
  const u = withTotal(users);
  return { sessions: s, users: u, crash_free_sessions: freeRate(s.crashed, s.total), crash_free_users: freeRate(u.crashed, u.total) };
}

export function makeReleasesService(store: SessionsStore) {
  /**
   * Adoption: the release's share of its environment's sessions and users
   * started in the last 24 hours, summed from the hourly rollups (a user
   * seen in several hours counts once per hour: docs/decisions.md).
   */
  async function adoption(project: number, environment: string | undefined, now: Date): Promise<Adoption> {
    const since = hourOf(new Date(now.getTime() - ADOPTION_WINDOW_MS));
    const hours = await store.hours
      .find({ project_id: project, hour: { $gte: since }, ...(environment ? { environment } : {}) }, { projection: { environment: 1, release: 1, sessions: 1, users: 1 } })
      .toArray();
    const out: Adoption = { byRelease: new Map(), byEnvironment: new Map() };
    for (const h of hours) {
      for (const [map, key] of [
        [out.byRelease, pairKey(h.environment, h.release)],
        [out.byEnvironment, h.environment],
      ] as const) {
        const entry = map.get(key) ?? { sessions: 0, users: 0 };
        entry.sessions += total(h.sessions);
        entry.users += total(h.users);
        map.set(key, entry);
      }
    }
    return out;
  }

  function view(doc: ReleaseRollup, window: Adoption) {
    const mine = window.byRelease.get(pairKey(doc.environment, doc.release)) ?? { sessions: 0, users: 0 };
    const env = window.byEnvironment.get(doc.environment) ?? { sessions: 0, users: 0 };
    return {
      release: doc.release,
      environment: doc.environment,
      ...rates(doc.sessions, doc.users),
      adoption_sessions: share(mine.sessions, env.sessions),
      adoption_users: share(mine.users, env.users),
      first_seen: doc.first_seen.toISOString(),
      last_seen: doc.last_seen.toISOString(),
    };
  }

  function hourView(doc: HourRollup) {
    return { hour: doc.hour.toISOString(), ...rates(doc.sessions, doc.users) };
  }

  return {
    async list(project: number, environment: string | undefined, now: Date) {
      const filter = { project_id: project, ...(environment ? { environment } : {}) };
      const [docs, window] = await Promise.all([store.releases.find(filter).sort({ last_seen: -1, _id: 1 }).toArray(), adoption(project, environment, now)]);
      return { releases: docs.map((d) => view(d, window)), total: docs.length };
    },

    /** One release with its hourly series: every hour, or those from `since` on (the dashboard's chart range). */
    async get(project: number, release: string, environment: string | undefined, now: Date, since?: Date) {
      const docs = await store.releases.find({ project_id: project, release, ...(environment ? { environment } : {}) }).toArray();
      if (docs.length === 0) throw new NotFoundError('release_not_found', 'no sessions of this release (in this environment) are stored');
      if (docs.length > 1) {
        throw new BadRequestError('environment_required', 'this release has sessions in several environments: name one with ?environment=', {
          environments: docs.map((d) => d.environment).sort(),
        });
      }
      const doc = docs[0]!;
      const [window, hours] = await Promise.all([
        adoption(project, doc.environment, now),
        store.hours
          .find({ project_id: project, environment: doc.environment, release: doc.release, ...(since ? { hour: { $gte: hourOf(since) } } : {}) })
          .sort({ hour: 1 })
          .toArray(),
      ]);
      return { ...view(doc, window), series: hours.map(hourView) };
    },
  };
}
export type ReleasesService = ReturnType<typeof makeReleasesService>;
