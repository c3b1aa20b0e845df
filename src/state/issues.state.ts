/**
 * The hot state of issues in Redis: the fingerprint → issue map, each
 * issue's counters and status, its events, spread and hourly counts. It
 * changes only through the scripts in ./scripts, one call per project per
 * batch; the flusher copies changed issues to MongoDB, which serves the
 * reads. One module per operation, gathered here: issue ids
 * (./issue-ids.ts), applying events (./apply-events.ts), feedback links
 * (./feedback-links.ts), a rebuild's replacement (./issue-replace.ts), the
 * issue hash codec (./issue-hash.ts); the status, the flusher's snapshot and
 * the reads of issues are here. The burst detectors' attempts and folds are
 * ./bursts.state.ts'.
 */
import type { RedisClient } from '../redis/connect.ts';
import type { IssueStatus } from '../domain/issue-status.ts';
import type { IncidentChange } from '../domain/incidents.ts';
import type { TriggerRecord } from '../domain/notifications.ts';
import type { IssueDoc } from '../store/issues.store.ts';
import { makeApplyEvents } from './apply-events.ts';
import { issueChangesOf, type IssueChange } from './issue-changes.ts';
import { makeFeedbackLinks } from './feedback-links.ts';
import { fromPairs, readIssue } from './issue-hash.ts';
import { makeIssueIds } from './issue-ids.ts';
import { makeIssueReplace } from './issue-replace.ts';
import { takeLease, type Lease } from './lease.ts';
import { makePendingFlush } from './pending-flush.ts';
import { makeRepackList, type RepackList } from './repack-list.ts';
import { answerOf, defineScripts, projectKeys } from './scripts.ts';

/** About how many changed issues one snapshot call reads and indexes (a few milliseconds of Redis's time). */
const SNAPSHOT_CHUNK = 500;

export function makeIssuesState(redis: RedisClient, opts: { prefix: string }) {
  const r = defineScripts(redis);
  const keys = (project: number) => projectKeys(opts.prefix, project);
  const pending = makePendingFlush(redis, opts.prefix, 'events');

  return {
    redis,
    keys,
    pending,
    ...makeIssueIds(r, { prefix: opts.prefix, base: (project) => keys(project).base }),
    ...makeApplyEvents(r, opts),
    ...makeFeedbackLinks(r, opts),
    ...makeIssueReplace(r, { prefix: opts.prefix, pending }),

    /** Takes deleted events off their issues' event lists (retention); the issues' counters stay. */
    async forgetEvents(project: number, byIssue: { issue: number; events: string[] }[]): Promise<void> {
      const pipe = redis.pipeline();
      for (const { issue, events } of byIssue) if (events.length > 0) pipe.zrem(`${keys(project).base}ie:${issue}`, ...events);
      await pipe.exec();
    },

    /** The groups (src/store/attempts.store.ts) of the project the repacker has yet to rewrite. */
    repackList: (project: number): RepackList => makeRepackList(redis, `${keys(project).base}rp`),
    /**
     * The repacker's lease, for up to `ms`: one run at a time across the workers, since a run that spreads its work
     * outlasts the interval it is scheduled at. Null: another run holds it.
     */
    takeRepackLease: (ms: number): Promise<Lease | null> => takeLease(redis, `${opts.prefix}:repack:lease`, ms),

    /**
     * Sets an issue's status; `mode` (set-issue-status-3.lua) makes a resolve last until a newer release ('next'),
     * an ignore until so many more events ('count:<n>') or a time ('until:<ms>').
     */
    async setStatus(project: number, issue: number, status: IssueStatus, now: Date, mode = ''): Promise<'set' | 'not_found' | 'unverified'> {
      const k = keys(project);
      const code = await r.setIssueStatus(k.epoch, k.eseq, k.edirty, k.base, issue, status, now.getTime(), mode);
      return answerOf(code, { 1: 'set', 0: 'not_found' } as const);
    },
    /** Records an incident's change in its issue (apply-incident-3.lua); `notify`: the project's triggers go to its outbox. */
    async applyIncident(project: number, issue: number, change: IncidentChange, notify: boolean): Promise<{ code: 'applied' | 'already_applied' | 'unverified'; changes: IssueChange[] }> {
      const k = keys(project);
      const [code, changes] = await r.applyIncident(k.epoch, k.eseq, k.edirty, k.base, issue, JSON.stringify(change), notify ? 't' : '');
      return { code: answerOf(code, { 1: 'applied', 0: 'already_applied' } as const), changes: issueChangesOf(changes) };
    },
    /** Assigns an issue to a member (email) or no one (''); answers whom it was assigned to before. */
    async assign(project: number, issue: number, assignee: string, trigger: TriggerRecord): Promise<{ was: string } | 'not_found' | 'unverified'> {
      const k = keys(project);
      const answer = await r.assignIssue(k.epoch, k.eseq, k.edirty, k.base, issue, assignee, JSON.stringify(trigger));
      if (Array.isArray(answer)) return { was: answer[0] };
      return answerOf(answer, { 0: 'not_found' } as const);
    },

    /**
     * Changed issues as documents, a chunk of about SNAPSHOT_CHUNK at a time from `cursor` ('0' to begin; the answer's
     * cursor is '0' after the last chunk), or the ones named, with the project's event change counter, read atomically.
     */
    async snapshot(
      project: number,
      from: { cursor?: string; ids?: number[] } = {},
    ): Promise<{ verified: boolean; seq: number; cursor: string; issues: { doc: IssueDoc; version: string }[] }> {
      const k = keys(project);
      const ids = (from.ids ?? []).map(String);
      const [verified, seq, cursor, ...rows] = await r.snapshotIssues(k.epoch, k.eseq, k.edirty, k.base, from.cursor ?? '0', SNAPSHOT_CHUNK, ...ids);
      const issues = rows
        .filter(([, , fields]) => fields.length > 0)
        .map(([id, version, fields, companies]) => ({ doc: readIssue(project, Number(id), fromPairs(fields), companies), version }));
      return { verified: verified === 1, seq, cursor, issues };
    },
    /** Issues as their hashes hold them now (a notification's, before the flusher copies them); a missing one is left out. */
    async issues(project: number, ids: number[]): Promise<Map<number, IssueDoc>> {
      const pipe = redis.pipeline();
      for (const id of ids) pipe.hgetall(`${keys(project).base}i:${id}`).smembers(`${keys(project).base}ic:${id}`);
      const answers = (await pipe.exec()) ?? [];
      const out = new Map<number, IssueDoc>();
      for (const [i, id] of ids.entries()) {
        const h = answers[2 * i]![1] as Record<string, string>;
        if (h.kind) out.set(id, readIssue(project, id, h, answers[2 * i + 1]![1] as string[]));
      }
      return out;
    },
    async clear(project: number, written: { id: number; version: string }[]): Promise<void> {
      if (written.length > 0) await r.clearDirty(keys(project).edirty, ...written.flatMap((w) => [String(w.id), w.version]));
    },
  };
}
export type IssuesState = ReturnType<typeof makeIssuesState>;
