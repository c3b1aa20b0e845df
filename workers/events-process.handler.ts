/**
 * events.process: applies one group of events to the issues in Redis.
 * Per project, one script call (src/state/scripts/apply-events-4.lua) counts
 * error events in their issues and records sign-in attempts in their
 * groups' sorted sets, once per group id. Then the burst detectors
 * (src/domain/bursts.ts) run over each touched group's attempts in the
 * look-back, and each burst found is recorded in its security issue with
 * counts that only grow, so a retry, a duplicate delivery or two workers on
 * one burst leave the same result. The flusher copies changed issues to
 * MongoDB and takes the group off the backlog.
 */
import crypto from 'node:crypto';
import { detectBruteForce, detectStuffing, type Attempt, type Burst, type BurstSettings } from '../src/domain/bursts.ts';
import type { JobPayloads } from '../src/queues/registry.ts';
import type { Runtime } from '../src/runtime.ts';
import { entryOf, type EventEntry } from '../src/services/events.service.ts';
import { ATTEMPT_KINDS, DETECTION_LOOKBACK_MS, type AttemptEntry, type IssuesState } from '../src/state/issues.state.ts';
import { eventKey } from '../src/store/events.store.ts';
import { DEFAULT_ALERTS } from '../src/store/projects.store.ts';
import { groupBy } from '../src/util/group-by.ts';

export async function processEventGroup(payload: JobPayloads['events.process'], runtime: Runtime, now: Date) {
  const { issuesState: state, keeper } = runtime;
  // The API's jobs carry the events; the sweeper's only the group's id.
  const stored = payload.events ? null : await runtime.stores.events.ofBatch(payload.id);
  const entries: EventEntry[] = payload.events ?? stored!.map((doc) => entryOf(doc));
  const receivedAt = new Date(payload.received_at ?? stored?.[0]?.received_at ?? now);
  const byProject = new Map<number, EventEntry[]>();
  for (const [project, list] of groupBy(entries, (e) => e.project_id)) byProject.set(project, list.map((e) => ({ ...e, at: new Date(e.at) })));

  for (const [project, events] of byProject) {
    // Verified before issue ids are read: a Redis that lost its fingerprint map must be rebuilt before anything is numbered.
    await keeper.verify(project, now);
    const errors = events.filter((e) => e.kind === 'error');
    const ids = await state.issueIds(project, errors.map((e) => e.fingerprint!));
    const attempts: AttemptEntry[] = events
      .filter((e) => e.kind === 'security' && ATTEMPT_KINDS.has(e.security_kind ?? ''))
      .map((e) => ({ event_id: e.event_id, at: e.at, kind: e.security_kind!, actor: e.actor ?? '', group: e.group_key!, ip: e.ip }));
    const code = await state.apply(project, payload.id, receivedAt, errors.map((e) => ({ event: e._id, issue: ids.get(e.fingerprint!)!, at: e.at, release: e.release, level: e.level, title: e.title, exception_type: e.exception_type, company: e.company, fingerprint: e.fingerprint! })), attempts);
    if (code === 'unverified') throw new Error(`Redis restarted while project ${project} was being applied; retrying`);
    // Detection runs on every delivery: a worker that died after the script but before this step is retried.
    if (attempts.length > 0) await detectBursts(runtime, project, attempts, receivedAt);
  }
  await state.pending.noteApplied([...byProject.keys()], payload.id);
  return { projects: byProject.size, events: entries.length };
}

/** Settings of a project, read at most once a second per process (alert changes apply within a second). */
const settingsCache = new Map<number, { at: number; settings: BurstSettings }>();
async function alertSettings(runtime: Runtime, project: number): Promise<BurstSettings> {
  const hit = settingsCache.get(project);
  if (hit && Date.now() - hit.at < 1000) return hit.settings;
  const settings = { ...DEFAULT_ALERTS, ...(await runtime.stores.projects.get(project))?.alerts };
  settingsCache.set(project, { at: Date.now(), settings });
  return settings;
}

async function detectBursts(runtime: Runtime, project: number, attempts: AttemptEntry[], receivedAt: Date): Promise<void> {
  const state = runtime.issuesState;
  const settings = await alertSettings(runtime, project);
  const mine = new Set(attempts.map((a) => a.event_id));
  const earliest = (list: AttemptEntry[]) => new Date(Math.min(...list.map((a) => a.at.getTime())) - DETECTION_LOOKBACK_MS);
  const groups = groupBy(attempts, (a) => a.group);
  for (const [group, list] of groups) {
    const read = await state.attempts(project, 'ag', group, earliest(list));
    for (const burst of detectBruteForce(read, settings)) await recordBurst(state, project, 'brute_force', group, burst, read, mine, receivedAt);
  }
  const ips = groupBy(attempts.filter((a) => a.ip), (a) => a.ip!);
  for (const [ip, list] of ips) {
    const read = await state.attempts(project, 'aip', ip, earliest(list));
    for (const burst of detectStuffing(read, settings)) await recordBurst(state, project, 'credential_stuffing', ip, burst, read, mine, receivedAt);
  }
}

async function recordBurst(
  state: IssuesState,
  project: number,
  detector: 'brute_force' | 'credential_stuffing',
  groupKey: string,
  burst: Burst,
  attempts: Attempt[],
  mine: Set<string>,
  receivedAt: Date,
): Promise<void> {
  const digest = crypto.createHash('sha256').update(groupKey).digest('hex').slice(0, 16);
  const [actor, ip] = detector === 'brute_force' ? groupKey.split('|') : [null, groupKey];
  const title =
    detector === 'brute_force'
      ? `Repeated failed sign-ins for ${actor} from ${ip === '-' ? 'an unknown address' : ip}`
      : `Failed sign-ins on many accounts from ${ip}`;
  const fingerprint = `security:${detector}:${digest}:${burst.key}`;
  const id = (await state.issueIds(project, [fingerprint])).get(fingerprint)!;
  const members = new Set(burst.attempt_ids);
  const latest = attempts.filter((a) => members.has(a.id)).reduce((a, b) => (b.at > a.at || (b.at === a.at && b.id > a.id) ? b : a));
  const result = await state.applyBurst(project, id, {
    fingerprint,
    title,
    detector,
    count: burst.attempt_ids.length,
    first: new Date(burst.first_seen),
    last: new Date(burst.last_seen),
    latest: eventKey(project, latest.id),
    latest_at: new Date(latest.at),
    received: burst.attempt_ids.some((a) => mine.has(a)) ? receivedAt : undefined,
  });
  if (result === 'unverified') throw new Error(`the Redis state of project ${project} changed during burst detection; retrying`);
}

