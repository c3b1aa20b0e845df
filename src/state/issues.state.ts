/**
 * The hot state of issues in Redis: the fingerprint → issue map, each
 * issue's counters and status, and the sign-in attempts the burst detectors
 * read. It changes only through the scripts in ./scripts, one call per
 * project per batch (plus one per burst found); the flusher copies changed
 * issues to MongoDB, which serves the reads.
 */
import type { Redis } from 'ioredis';
import type { Attempt } from '../domain/bursts.ts';
import type { IssueStatus } from '../domain/issue-status.ts';
import type { IssueDoc } from '../store/issues.store.ts';
import { defineScripts, projectKeys } from './scripts.ts';
import { APPLIED_MEMORY_MS } from './sessions.state.ts';

/** How far back the detectors read a group's attempts, and the most they read; bursts chained over longer spans may split. */
export const DETECTION_LOOKBACK_MS = 24 * 3600 * 1000;
export const DETECTION_MAX_ATTEMPTS = 20_000;

/** An error event as the apply script takes it. */
export interface ErrorEntry {
  event: string;
  issue: number;
  at: Date;
  release: string | null;
  level: string;
  title: string;
  exception_type: string | null;
  company: string | null;
  fingerprint: string;
}

/** A sign-in attempt as the apply script takes it. */
export interface AttemptEntry {
  event_id: string;
  at: Date;
  kind: string;
  actor: string;
  group: string;
  ip: string | null;
}

export interface BurstEntry {
  fingerprint: string;
  title: string;
  detector: 'brute_force' | 'credential_stuffing';
  count: number;
  first: Date;
  last: Date;
  latest: string;
  latest_at: Date;
  /** when the batch was received, if the burst holds one of its attempts (it may regress the issue) */
  received?: Date;
}

export type Code = 'applied' | 'already_applied' | 'unverified';
const CODES: Record<number, Code> = { 1: 'applied', 0: 'already_applied', [-1]: 'unverified' };

export function makeIssuesState(redis: Redis, opts: { prefix: string }) {
  const r = defineScripts(redis);
  const dirtyProjects = `${opts.prefix}:events:dirty-projects`;
  const appliedBatches = `${opts.prefix}:events:applied-batches`;
  /** Issue ids come from one counter for all projects (a plain command: it is not in any project's slot). */
  const issueSeq = `${opts.prefix}:issues:seq`;
  const keys = (project: number) => projectKeys(opts.prefix, project);

  return {
    redis,
    keys,

    /** The issue of each fingerprint, new ones numbered from the shared counter (first writer wins). */
    async issueIds(project: number, fingerprints: string[]): Promise<Map<string, number>> {
      const unique = [...new Set(fingerprints)];
      const out = new Map<string, number>();
      if (unique.length === 0) return out;
      const fp = `${keys(project).base}fp`;
      const known = await redis.hmget(fp, ...unique);
      for (const [i, f] of unique.entries()) {
        if (known[i]) {
          out.set(f, Number(known[i]));
          continue;
        }
        const id = await redis.incr(issueSeq);
        // Two workers may number one fingerprint at once: the first mapping stays, the other id is unused.
        out.set(f, (await redis.hsetnx(fp, f, String(id))) === 1 ? id : Number(await redis.hget(fp, f)));
      }
      return out;
    },
    /** After a Redis restart: the counter never goes below the highest issue id MongoDB holds. */
    async raiseIssueSeq(atLeast: number): Promise<void> {
      await redis.eval("if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end", 1, issueSeq, atLeast);
    },

    async apply(project: number, batchId: string, receivedAt: Date, errors: ErrorEntry[], attempts: AttemptEntry[]): Promise<Code> {
      const k = keys(project);
      const entries = {
        e: errors.map((e) => [e.event, e.issue, String(e.at.getTime()), e.release ?? '', e.level, e.title, e.exception_type ?? '', e.company ?? '', e.fingerprint]),
        a: attempts.map((a) => [a.event_id, String(a.at.getTime()), a.kind, a.actor, a.group, a.ip ?? '']),
      };
      const [code] = await r.applyEvents(k.epoch, k.eseq, k.eapplied, k.edirty, k.base, batchId, receivedAt.getTime(), APPLIED_MEMORY_MS, `${DETECTION_LOOKBACK_MS}:${DETECTION_MAX_ATTEMPTS}`, JSON.stringify(entries));
      return CODES[code]!;
    },

    /** The attempts of a group (`ag`) or an ip (`aip`) since `since`, oldest first. */
    async attempts(project: number, kind: 'ag' | 'aip', key: string, since: Date): Promise<Attempt[]> {
      const raw = await redis.zrangebyscore(`${keys(project).base}${kind}:${key}`, since.getTime(), '+inf', 'WITHSCORES');
      const out: Attempt[] = [];
      for (let i = 0; i < raw.length; i += 2) {
        const [, id, k, actor] = /^([^|]*)\|([^|]*)\|(.*)$/.exec(raw[i]!)!;
        out.push({ id: id!, kind: k!, actor: actor!, at: Number(raw[i + 1]) });
      }
      return out;
    },

    async applyBurst(project: number, issue: number, burst: BurstEntry): Promise<'changed' | 'unchanged' | 'unverified'> {
      const k = keys(project);
      const arg = { ...burst, first: burst.first.getTime(), last: burst.last.getTime(), latest_at: burst.latest_at.getTime(), received: burst.received?.getTime() };
      const code = await r.applyBurst(k.epoch, k.eseq, k.edirty, k.base, issue, JSON.stringify(arg));
      return code === 1 ? 'changed' : code === 0 ? 'unchanged' : 'unverified';
    },

    async setStatus(project: number, issue: number, status: IssueStatus, now: Date): Promise<'set' | 'not_found' | 'unverified'> {
      const k = keys(project);
      const code = await r.setIssueStatus(k.epoch, k.eseq, k.edirty, k.base, issue, status, now.getTime());
      return code === 1 ? 'set' : code === 0 ? 'not_found' : 'unverified';
    },

    /** Changed issues (or the ones named) as documents, with the project's event change counter, read atomically. */
    async snapshot(project: number, ids: number[] = []): Promise<{ verified: boolean; seq: number; issues: { doc: IssueDoc; version: string }[] }> {
      const k = keys(project);
      const [verified, seq, ...rows] = await r.snapshotIssues(k.epoch, k.eseq, k.edirty, k.base, ...ids.map(String));
      const issues = rows.filter(([, , fields]) => fields.length > 0).map(([id, version, fields, companies]) => ({ doc: readIssue(project, Number(id), fields, companies), version }));
      return { verified: verified === 1, seq, issues };
    },
    async clear(project: number, written: { id: number; version: string }[]): Promise<void> {
      if (written.length > 0) await r.clearDirty(keys(project).edirty, ...written.flatMap((w) => [String(w.id), w.version]));
    },

    async noteApplied(projects: number[], batchId: string): Promise<void> {
      if (projects.length > 0) await redis.sadd(dirtyProjects, ...projects.map(String));
      await redis.sadd(appliedBatches, batchId);
    },
    markDirty: (project: number) => redis.sadd(dirtyProjects, String(project)),
    appliedBatches: () => redis.smembers(appliedBatches),
    forgetApplied: async (ids: string[]) => void (ids.length > 0 && (await redis.srem(appliedBatches, ...ids))),
    dirtyProjects: async () => (await redis.smembers(dirtyProjects)).map(Number),
    takeDirty: (project: number) => redis.srem(dirtyProjects, String(project)),
  };
}
export type IssuesState = ReturnType<typeof makeIssuesState>;

/** An issue hash (apply-events-4.lua) → the document MongoDB keeps. */
function readIssue(project: number, id: number, fields: string[], companies: string[]): IssueDoc {
  const h: Record<string, string> = {};
  for (let i = 0; i < fields.length; i += 2) h[fields[i]!] = fields[i + 1]!;
  const date = (f: string) => (h[f] ? new Date(Number(h[f])) : null);
  return {
    _id: id,
    project_id: project,
    kind: h.kind as IssueDoc['kind'],
    fingerprint: h.fingerprint!,
    title: h.title!,
    exception_type: h.exception_type || null,
    level: h.level!,
    status: h.status as IssueStatus,
    first_seen: date('first')!,
    last_seen: date('last')!,
    event_count: Number(h.count),
    last_release: h.last_release || null,
    regression_count: Number(h.regressions),
    resolved_count: Number(h.resolves),
    resolved_at: date('resolved_at'),
    resolved_release: h.resolved_release || null,
    last_regressed_at: date('regressed_at'),
    last_regression_kind: (h.regression_kind || null) as IssueDoc['last_regression_kind'],
    companies: companies.sort(),
    created_at: date('created')!,
    latest_event: h.latest || null,
  };
}
