/**
 * events.process: applies the groups of events of one job to the issues in
 * Redis. The API gathers the groups it stored over a few milliseconds into
 * one job (src/services/events.service.ts). Per project, one script call
 * (src/state/scripts/apply-events-4.lua) counts error events in their issues
 * and records sign-in attempts in their groups' sorted sets, each group once
 * by its id. Then the burst detectors (src/domain/bursts.ts) run over each
 * touched group's and address's attempts in the look-back, read in one round
 * trip, and each burst found is recorded in its security issue with
 * counts that only grow, so a retry, a duplicate delivery or two workers on
 * one burst leave the same result. The flusher copies changed issues to
 * MongoDB and takes the group off the backlog.
 *
 * For a project with notification channels, the scripts also record the
 * triggers (new issue, regression, burst) in its outbox, the frequency rules
 * are checked over the issues the job touched, and the project is marked for
 * the dispatcher (src/notify/dispatcher.ts), on every delivery of the job.
 */
import crypto from 'node:crypto';
import { issueKindOf } from '../src/domain/csp.ts';
import { resumeSettled, type Attempt, type Burst, type Detector } from '../src/domain/bursts.ts';
import type { JobPayloads } from '../src/queues/registry.ts';
import type { Runtime } from '../src/runtime.ts';
import { entryOfJob, type EventEntry } from '../src/queues/jobs/events-process.ts';
import { attemptEntry, entryOf } from '../src/services/events.service.ts';
import { ATTEMPT_KINDS, DETECTION_LOOKBACK_MS, DETECTION_SETTLE_MS, DETECTOR_OF, type AppliedGroup, type AttemptEntry, type DetectorKey, type IssuesState } from '../src/state/issues.state.ts';
import { eventKey } from '../src/store/events.store.ts';
import { checkFrequency, notifyFlags } from '../src/notify/rules.ts';
import { groupBy } from '../src/util/group-by.ts';
import { StateMovedError } from '../src/state/rebuild.ts';

export async function processEventGroups(payload: JobPayloads['events.process'], runtime: Runtime, now: Date) {
  const { issuesState: state, keeper } = runtime;
  // Per project, its part of each group: the API's jobs carry the events, the sweeper's only the group's id.
  const byProject = new Map<number, { group: string; receivedAt: Date; events: EventEntry[] }[]>();
  let count = 0;
  const swept = payload.groups.filter((g) => !g.events).map((g) => g.id);
  const sweptEntries = groupBy(
    swept.length > 0
      ? [...(await runtime.stores.events.ofBatches(swept)).map((doc) => entryOf(doc)), ...(await runtime.stores.events.attempts.ofBatches(swept)).map(attemptEntry)]
      : [],
    (entry) => entry.batch,
  );
  for (const group of payload.groups) {
    const stored = group.events ? null : (sweptEntries.get(group.id) ?? []);
    const entries: EventEntry[] = group.events?.map((event) => entryOfJob(event, group)) ?? stored!;
    const receivedAt = new Date(group.received_at ?? stored?.[0]?.received_at ?? now);
    count += entries.length;
    for (const [project, list] of groupBy(entries, (e) => e.project_id)) {
      const parts = byProject.get(project) ?? [];
      parts.push({ group: group.id, receivedAt, events: list });
      byProject.set(project, parts);
    }
  }

  for (const [project, parts] of byProject) {
    // Verified before issue ids are read: a Redis that lost its fingerprint map must be rebuilt before anything is numbered.
    await keeper.verify(project, now);
    const all = parts.flatMap((p) => p.events);
    const ids = await state.issueIds(project, all.filter((e) => e.kind === 'error').map((e) => e.fingerprint!));
    const groups: AppliedGroup[] = parts.map((p) => ({
      id: p.group,
      receivedAt: p.receivedAt,
      errors: p.events
        .filter((e) => e.kind === 'error')
        .map((e) => ({
          event: e._id,
          issue: ids.get(e.fingerprint!)!,
          issue_kind: issueKindOf(e.exception_type),
          at: e.at,
          release: e.release,
          environment: e.environment ?? null,
          level: e.level,
          title: e.title,
          culprit: e.culprit ?? '',
          exception_type: e.exception_type,
          company: e.company ?? null,
          fingerprint: e.fingerprint!,
        })),
      attempts: p.events
        .filter((e) => e.kind === 'security' && ATTEMPT_KINDS.has(e.security_kind ?? ''))
        .map((e) => ({ event_id: e.event_id, at: e.at, kind: e.security_kind!, actor: e.actor ?? '', group: e.group_key!, ip: e.ip ?? null })),
      packed: p.events.some((e) => e.kind === 'security'),
    }));
    const channels = await runtime.channels(project);
    const flags = notifyFlags(channels);
    const code = await state.apply(project, groups, flags);
    if (code === 'unverified') throw new StateMovedError(project, 'the apply of its events');
    // Detection runs on every delivery: a worker that died after the script but before this step is retried.
    const attempts = groups.flatMap((g) => g.attempts.map((a) => ({ attempt: a, receivedAt: g.receivedAt })));
    if (attempts.length > 0) await detectBursts(runtime, project, attempts, flags);
    if (flags === '') continue;
    const touched = new Map(groups.flatMap((g) => g.errors.map((e) => [e.issue, { level: e.level, environment: e.environment }] as const)));
    await checkFrequency(runtime.notify, project, channels, touched, now);
    await runtime.notify.markProject(project);
  }
  await state.pending.noteApplied([...byProject.keys()], payload.groups.map((g) => g.id));
  return { projects: byProject.size, events: count };
}

/**
 * Runs both detectors over the groups and addresses the attempts touch (src/domain/bursts.ts): each goes on
 * from its saved fold, reading only the attempts after it, or folds its look-back from the start. Each fold
 * records its bursts, then is saved up to DETECTION_SETTLE_MS before its newest attempt.
 */
async function detectBursts(runtime: Runtime, project: number, attempts: { attempt: AttemptEntry; receivedAt: Date }[], flags: string): Promise<void> {
  const state = runtime.issuesState;
  const settings = await runtime.alertSettings(project);
  /** When the newest group holding an attempt was received: a burst holding one of them may regress its issue. */
  const received = new Map(attempts.map(({ attempt, receivedAt }) => [attempt.event_id, receivedAt]));
  const earliest = (list: { attempt: AttemptEntry }[]) => new Date(Math.min(...list.map((a) => a.attempt.at.getTime())) - DETECTION_LOOKBACK_MS);
  // Only failures raise or grow a burst: a group or address that only saw successes is not read again (its next failure
  // folds them in with the rest).
  const failures = attempts.filter((a) => a.attempt.kind === 'login_failed');
  // Each key carries its attempts' own actor and address: a decision names the address the attempts came from.
  const keys: DetectorKey[] = [
    ...[...groupBy(failures, (a) => a.attempt.group)].map(([key, list]) => ({ kind: 'ag' as const, key, actor: list[0]!.attempt.actor, ip: list[0]!.attempt.ip, since: earliest(list) })),
    ...[...groupBy(failures.filter((a) => a.attempt.ip), (a) => a.attempt.ip!)].map(([key, list]) => ({ kind: 'aip' as const, key, actor: null, ip: key, since: earliest(list) })),
  ];
  const reads = await state.detectorReads(project, keys, settings);
  const settledAt = (fresh: Attempt[]) => Math.max(...fresh.map((a) => a.at)) - DETECTION_SETTLE_MS;
  for (const [i, key] of keys.entries()) {
    const detector = DETECTOR_OF[key.kind];
    let read = reads[i]!;
    let folded = read.state && resumeSettled(detector, settings, read.state, read.leaving, read.fresh, settledAt(read.fresh));
    if (!folded) {
      // no saved fold, or one that needs attempts it did not read: from the start
      if (read.state) read = (await state.detectorReads(project, [key], settings, true))[0]!;
      folded = resumeSettled(detector, settings, null, [], read.fresh, settledAt(read.fresh))!;
    }
    for (const burst of folded.bursts) {
      await recordBurst(state, project, detector, key, burst, received, { notify: flags.includes('t'), decisionSeconds: settings.decision_seconds });
    }
    // Saved once its bursts are recorded: a worker that dies in between folds them again on the retry.
    await state.saveDetector(project, key, read, folded.state);
  }
}

async function recordBurst(
  state: IssuesState,
  project: number,
  detector: Detector,
  key: DetectorKey,
  burst: Burst,
  received: Map<string, Date>,
  opts: { notify: boolean; decisionSeconds: number },
): Promise<void> {
  const digest = crypto.createHash('sha256').update(key.key).digest('hex').slice(0, 16);
  const { actor, ip } = key;
  const title =
    detector === 'brute_force'
      ? `Repeated failed sign-ins for ${actor} from ${ip ?? 'an unknown address'}`
      : `Failed sign-ins on many accounts from ${ip}`;
  const fingerprint = `security:${detector}:${digest}:${burst.key}`;
  const id = (await state.issueIds(project, [fingerprint])).get(fingerprint)!;
  const result = await state.applyBurst(project, id, {
    fingerprint,
    title,
    detector,
    group: digest,
    first_id: burst.key,
    last_id: burst.latest.id,
    actor: detector === 'brute_force' ? actor : null,
    ip,
    count: burst.count,
    first: new Date(burst.first_seen),
    last: new Date(burst.last_seen),
    latest: eventKey(project, burst.latest.id),
    latest_at: new Date(burst.latest.at),
    received: newestReceived(burst.attempt_ids, received),
  }, { ...opts, now: new Date() });
  if (result === 'unverified') throw new StateMovedError(project, 'burst detection');
}

/** When the newest of this job's groups holding one of the burst's attempts was received, if any does. */
function newestReceived(ids: string[], received: Map<string, Date>): Date | undefined {
  let newest: Date | undefined;
  for (const id of ids) {
    const at = received.get(id);
    if (at && (!newest || at > newest)) newest = at;
  }
  return newest;
}
