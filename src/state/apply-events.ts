/**
 * Applying groups of events to a project's issues: one call of apply-events-4.lua per project and job, which counts
 * error events in their issues (counters, event list, spread, hourly counts, filter sets) and records sign-in
 * attempts in their groups' sorted sets, each group once by its id.
 */
import type { RedisClient } from '../redis/connect.ts';
import { groupTime } from '../util/group-commit.ts';
import { attemptSets, DETECTION_LOOKBACK_MS, DETECTION_MAX_ATTEMPTS, type AttemptEntry } from './bursts.state.ts';
import { answerOf, APPLY_CODES, projectKeys, type ApplyCode, type ScriptCommands } from './scripts.ts';
import { APPLIED_MEMORY_MS } from './sessions.state.ts';
import { issueChangesOf, type IssueChange } from './issue-changes.ts';

export type { IssueChange };

/** An error event (or a CSP violation) as the apply script takes it. */
export interface ErrorEntry {
  event: string;
  issue: number;
  /** the kind of its issue: `security` for a CSP violation's (src/domain/csp.ts) */
  issue_kind: 'error' | 'security';
  at: Date;
  release: string | null;
  level: string;
  title: string;
  culprit: string;
  exception_type: string | null;
  company: string | null;
  environment: string | null;
  fingerprint: string;
  /** its user's keys, '' for none, and its tags (src/domain/event-impact.ts) */
  user?: string;
  tags?: string[];
}

/** One group of events, as the apply script takes it for one project. */
export interface AppliedGroup {
  id: string;
  receivedAt: Date;
  errors: ErrorEntry[];
  attempts: AttemptEntry[];
  /** whether the group stored sign-in attempts of the project (of any kind): the repacker rewrites them later */
  packed?: boolean;
}

export function makeApplyEvents(redis: RedisClient & ScriptCommands, opts: { prefix: string }) {
  return {
    /** Applies the groups' events of one project in one script call; a group applied before is skipped. */
    async apply(project: number, groups: AppliedGroup[], notify = ''): Promise<{ code: ApplyCode; changes: IssueChange[] }> {
      const k = projectKeys(opts.prefix, project);
      const entries = groups.map((g) => ({
        id: g.id,
        ...repackListing(g),
        at: g.receivedAt.getTime(),
        e: g.errors.map(scriptEntry),
        a: g.attempts.map((a) => ({ at: String(a.at.getTime()), sets: attemptSets(a) })),
      }));
      const [code, , , changes] = await redis.applyEvents(
        k.epoch,
        k.eseq,
        k.eapplied,
        k.edirty,
        k.base,
        APPLIED_MEMORY_MS,
        `${DETECTION_LOOKBACK_MS}:${DETECTION_MAX_ATTEMPTS}`,
        JSON.stringify(entries),
        notify,
      );
      return { code: answerOf(code, APPLY_CODES), changes: issueChangesOf(changes) };
    },
  };
}

/** An error event as the script reads it: times in ms as decimal strings, '' for what it lacks. */
function scriptEntry(e: ErrorEntry) {
  return {
    event: e.event,
    issue: e.issue,
    kind: e.issue_kind,
    at: String(e.at.getTime()),
    release: e.release ?? '',
    environment: e.environment ?? '',
    level: e.level,
    title: e.title,
    culprit: e.culprit,
    exception_type: e.exception_type ?? '',
    company: e.company ?? '',
    fingerprint: e.fingerprint,
    user: e.user ?? '',
    tags: e.tags ?? [],
  };
}

/** A group that stored sign-in attempts is listed for the repacker by its id's time (`p`). */
function repackListing(g: AppliedGroup): { p?: number } {
  const made = g.packed ? groupTime(g.id) : NaN;
  return Number.isFinite(made) ? { p: made } : {};
}
