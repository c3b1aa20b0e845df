/**
 * Burst detection after a job applied sign-in attempts: both detectors (src/domain/bursts.ts) run over the
 * groups and addresses the attempts touch (credential stuffing per address and per IPv6 /64). Each goes on from its saved fold, reading only the attempts after it,
 * or folds its look-back from the start. Each fold records its bursts in their security issues (counts that only
 * grow, so a retry or a second worker leaves the same result), then is saved up to DETECTION_SETTLE_MS before its
 * newest attempt.
 */
import { makeAllowlist } from '../domain/allowlist.ts';
import { ipv6Prefix64 } from '../domain/ip-prefix.ts';
import { burstIssue, resumeSettled, type Attempt, type Burst, type Detector } from '../domain/bursts.ts';
import type { AlertSettings } from '../store/projects.store.ts';
import { StateMovedError } from '../state/rebuild.ts';
import { DETECTION_LOOKBACK_MS, DETECTION_SETTLE_MS, DETECTOR_OF, type AttemptEntry, type BurstsState, type DetectorKey, type DetectorRead } from '../state/bursts.state.ts';
import type { IssuesState } from '../state/issues.state.ts';
import type { IssueChange } from '../state/issue-changes.ts';
import { eventKey } from '../store/events.store.ts';
import { groupBy } from '../util/group-by.ts';

export interface AppliedAttempt {
  attempt: AttemptEntry;
  /** when the group holding it was received: a burst holding it may regress its issue */
  receivedAt: Date;
}

export function makeBurstsService(deps: { issuesState: IssuesState; burstsState: BurstsState; alertSettings: (project: number) => Promise<AlertSettings> }) {
  const state = deps.burstsState;

  async function recordBurst(
    project: number,
    detector: Detector,
    key: DetectorKey,
    burst: Burst,
    read: Map<string, Attempt>,
    received: Map<string, Date>,
    opts: { notify: boolean; settings: AlertSettings },
  ) {
    const { digest, fingerprint, title } = burstIssue(detector, key, burst);
    const { settings } = opts;
    const actor = detector === 'brute_force' ? key.actor : null;
    // A /64's burst: its failures in the burst's span, each with its own address. One address alone is that
    // address's burst (its own detector raises it), so the /64 raises one only when two or more addresses took part.
    const span = key.kind === 'a64' ? [...read.values()].filter((a) => a.kind === 'login_failed' && a.at >= burst.first_seen && a.at <= burst.last_seen) : [];
    const addresses = new Set(span.map((a) => a.ip!));
    if (key.kind === 'a64' && addresses.size < 2) return [];
    // no decision for an allowlisted actor or address (for a /64, any of its addresses that took part, or the /64
    // itself), nor while the project only monitors; the issue says which
    const allowlist = makeAllowlist(settings.allowlist);
    const allowlisted =
      allowlist.allows({ actor, ip: key.kind === 'a64' ? key.key.split('/')[0]! : key.ip }) || [...addresses].some((ip) => allowlist.allows({ actor: null, ip }));
    const policy = allowlisted ? 'allowlisted' : settings.decision_mode === 'monitor' ? 'monitoring' : '';
    const id = (await deps.issuesState.issueIds(project, [fingerprint])).get(fingerprint)!;
    const result = await state.applyBurst(
      project,
      id,
      {
        fingerprint,
        title,
        detector,
        group: digest,
        first_id: burst.key,
        last_id: burst.latest.id,
        actor,
        ip: key.ip,
        count: burst.count,
        first: new Date(burst.first_seen),
        last: new Date(burst.last_seen),
        latest: eventKey(project, burst.latest.id),
        latest_at: new Date(burst.latest.at),
        received: newestReceived(burst.attempt_ids, received),
        policy,
      },
      {
        notify: opts.notify,
        decisionSeconds: policy ? 0 : settings.decision_seconds,
        decision: { type: settings.decision_types[detector], escalate: settings.escalate, maxSeconds: settings.decision_max_seconds },
        now: new Date(),
        // the attempts join the issue (its list of attempts, hourly counts, actors and addresses); a /64's, every
        // one of its span, since the folds before a second address came were not recorded
        attempts:
          key.kind === 'a64'
            ? span.map((a) => ({ id: a.id, at: a.at, actor: a.actor, ip: a.ip! }))
            : burst.attempt_ids.flatMap((id) => {
                const a = read.get(id);
                return a ? [{ id, at: a.at, actor: a.actor || key.actor, ip: key.ip }] : [];
              }),
      },
    );
    if (result.code === 'unverified') throw new StateMovedError(project, 'burst detection');
    return result.changes;
  }

  return {
    /**
     * `flags`: the project's notification flags (`t`: its triggers go to its outbox). Answers what the bursts
     * changed in their issues' statuses (regressions, ended ignores) for the activity.
     */
    async detect(project: number, attempts: AppliedAttempt[], flags: string): Promise<IssueChange[]> {
      const changes: IssueChange[] = [];
      const settings = await deps.alertSettings(project);
      const received = new Map(attempts.map(({ attempt, receivedAt }) => [attempt.event_id, receivedAt]));
      const earliest = (list: AppliedAttempt[]) => new Date(Math.min(...list.map((a) => a.attempt.at.getTime())) - DETECTION_LOOKBACK_MS);
      // Only failures raise or grow a burst: a group or address that only saw successes is not read again (its next
      // failure folds them in with the rest).
      const failures = attempts.filter((a) => a.attempt.kind === 'login_failed');
      // Each key carries its attempts' own actor and address: a decision names the address the attempts came from.
      const keys: DetectorKey[] = [
        ...[...groupBy(failures, (a) => a.attempt.group)].map(([key, list]) => ({
          kind: 'ag' as const,
          key,
          actor: list[0]!.attempt.actor,
          ip: list[0]!.attempt.ip,
          since: earliest(list),
        })),
        ...[
          ...groupBy(
            failures.filter((a) => a.attempt.ip),
            (a) => a.attempt.ip!,
          ),
        ].map(([key, list]) => ({ kind: 'aip' as const, key, actor: null, ip: key, since: earliest(list) })),
        ...[...groupBy(failures, (a) => (a.attempt.ip && ipv6Prefix64(a.attempt.ip)) || '')]
          .filter(([prefix]) => prefix !== '')
          .map(([prefix, list]) => ({ kind: 'a64' as const, key: prefix, actor: null, ip: prefix, since: earliest(list) })),
      ];
      // a project whose state a rebuild may be refilling is not read: the job is retried, and judges its attempts then
      const reads = verifiedReads(project, await state.detectorReads(project, keys, settings));
      const settledAt = (fresh: Attempt[]) => Math.max(...fresh.map((a) => a.at)) - DETECTION_SETTLE_MS;
      for (const [i, key] of keys.entries()) {
        const detector = DETECTOR_OF[key.kind];
        let read = reads[i]!;
        let folded = read.state && resumeSettled(detector, settings, read.state, read.leaving, read.fresh, settledAt(read.fresh));
        if (!folded) {
          // no saved fold, or one that needs attempts it did not read: from the start
          if (read.state) read = verifiedReads(project, await state.detectorReads(project, [key], settings, true))[0]!;
          folded = resumeSettled(detector, settings, null, [], read.fresh, settledAt(read.fresh))!;
        }
        const attempts = new Map([...read.leaving, ...read.fresh].map((a) => [a.id, a]));
        for (const burst of folded.bursts) {
          changes.push(...(await recordBurst(project, detector, key, burst, attempts, received, { notify: flags.includes('t'), settings })));
        }
        // Saved once its bursts are recorded: a worker that dies in between folds them again on the retry.
        await state.saveDetector(project, key, read, folded.state);
      }
      return changes;
    },
  };
}
export type BurstsService = ReturnType<typeof makeBurstsService>;

function verifiedReads(project: number, reads: DetectorRead[] | 'unverified'): DetectorRead[] {
  if (reads === 'unverified') throw new StateMovedError(project, 'burst detection');
  return reads;
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
