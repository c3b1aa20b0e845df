/**
 * The Redis scripts of the hot state (./scripts/*.lua), loaded once per
 * connection with ioredis' defineCommand and called only through the typed
 * wrappers in this folder. A file's name ends in its number of keys, as
 * BullMQ names its scripts; each file's opening comment lists its keys,
 * arguments and answers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isCluster, primaries, type RedisClient } from '../redis/connect.ts';
import { rootPath } from '../util/paths.ts';

const SCRIPT_DIR = rootPath('src', 'state', 'scripts');

const SCRIPTS = {
  mergeSessions: 'merge-sessions-4.lua',
  readSession: 'read-session-1.lua',
  snapshotRollups: 'snapshot-rollups-3.lua',
  clearDirty: 'clear-dirty-1.lua',
  applyEvents: 'apply-events-4.lua',
  applyBurst: 'apply-burst-3.lua',
  setIssueStatus: 'set-issue-status-3.lua',
  assignIssue: 'assign-issue-3.lua',
  snapshotIssues: 'snapshot-issues-3.lua',
  listIssues: 'list-issues-3.lua',
  raiseCounter: 'raise-counter-1.lua',
  raiseNotice: 'raise-notice-2.lua',
  routeNotice: 'route-notice-4.lua',
  takeDigest: 'take-digest-4.lua',
  endDecisions: 'end-decisions-2.lua',
  runId: 'run-id-1.lua',
  readDetector: 'read-detector-3.lua',
  saveDetector: 'save-detector-2.lua',
  endLease: 'end-lease-1.lua',
  renewLease: 'renew-lease-1.lua',
  countIngest: 'count-ingest-1.lua',
  linkFeedback: 'link-feedback-1.lua',
  saveMonitor: 'save-monitor-4.lua',
  applyIncident: 'apply-incident-3.lua',
  sampleTraces: 'sample-traces-3.lua',
} as const;

/**
 * The scripts that only read, or write only what may be lost (a detector's saved fold: the one before it
 * still holds): on a cluster the others wait for a replica (below).
 */
const NO_REPLICA_WAIT = new Set<string>(['listIssues', 'runId', 'readSession', 'readDetector', 'saveDetector', 'endLease', 'renewLease', 'countIngest', 'sampleTraces']);
/**
 * On a cluster, how long a write script's answer waits for a replica to have
 * it (WAIT): a primary SIGKILLed right after answering must not take an
 * applied batch with it, since the batch's job would be done and its marker
 * may go. A primary with a replica connected that does not confirm within
 * this time fails the call (its job is retried); one with no replica (just
 * promoted, its old primary gone) answers at once: there is no copy to wait for.
 */
const REPLICA_WAIT_MS = 2000;

/** A write a primary with a replica could not confirm as replicated in time; the caller retries (jobs do). */
export class ReplicaLagError extends Error {
  override name = 'ReplicaLagError';
}

type Arg = string | number;
interface Pipelined {
  info(section: string): Pipelined;
  exec(): Promise<[Error | null, unknown][] | null>;
}
export interface ScriptCommands {
  mergeSessions(epoch: string, seq: string, applied: string, dirty: string, ...argv: Arg[]): Promise<[number, number, number, number]>;
  readSession(table: string, ...argv: Arg[]): Promise<[number, number, string, string, string] | null>;
  snapshotRollups(epoch: string, seq: string, dirty: string, base: string): Promise<[number, number, ...[string, string, string[]][]]>;
  clearDirty(dirty: string, ...pairs: string[]): Promise<number>;
  applyEvents(epoch: string, seq: string, applied: string, dirty: string, ...argv: Arg[]): Promise<[number, number, number, string]>;
  applyBurst(epoch: string, seq: string, dirty: string, ...argv: Arg[]): Promise<[number, string]>;
  setIssueStatus(epoch: string, seq: string, dirty: string, ...argv: Arg[]): Promise<number>;
  assignIssue(epoch: string, seq: string, dirty: string, ...argv: Arg[]): Promise<number | [string]>;
  snapshotIssues(
    epoch: string,
    seq: string,
    dirty: string,
    base: string,
    cursor: string,
    count: number,
    ...ids: string[]
  ): Promise<[number, number, string, ...[string, string, string[], string[]][]]>;
  listIssues(epoch: string, order: string, counts: string, ...argv: Arg[]): Promise<[number, number, ...(string | (string | null)[])[]]>;
  raiseCounter(counter: string, atLeast: number): Promise<number>;
  raiseNotice(mark: string, outbox: string, ttlMs: number, trigger: string): Promise<number>;
  routeNotice(sent: string, buffer: string, pending: string, record: string, ...argv: Arg[]): Promise<string[]>;
  takeDigest(sent: string, buffer: string, pending: string, digest: string, ...argv: Arg[]): Promise<string[]>;
  endDecisions(active: string, log: string, ...argv: Arg[]): Promise<string[]>;
  runId(anyKey: string): Promise<string>;
  readDetector(epoch: string, attempts: string, fold: string, ...argv: Arg[]): Promise<[string, string, string, string, string[], string[]] | number>;
  saveDetector(attempts: string, fold: string, ...argv: Arg[]): Promise<number>;
  endLease(lease: string, token: string): Promise<number>;
  renewLease(lease: string, token: string, ms: number): Promise<number>;
  countIngest(hour: string, ...argv: Arg[]): Promise<number>;
  linkFeedback(epoch: string, ...argv: Arg[]): Promise<number>;
  saveMonitor(mon: string, due: string, seen: string, out: string, ...argv: Arg[]): Promise<number>;
  applyIncident(epoch: string, seq: string, dirty: string, ...argv: Arg[]): Promise<[number, string]>;
  sampleTraces(slow: string, bytes: string, names: string, ...argv: Arg[]): Promise<[number[], number[]]>;
}

/** The scripts as a pipeline queues them. */
export type ScriptPipeline = { [K in keyof ScriptCommands]: (...args: Parameters<ScriptCommands[K]>) => ScriptPipeline } & {
  exec(): Promise<[Error | null, unknown][] | null>;
};

/** The answer of every script that checks the project's epoch when its state is not verified (lib/epoch.lua). */
const UNVERIFIED = -1;

/**
 * A script's numeric answer by name, decoded in this one place: -1 is 'unverified' (the project's state must be
 * verified first: src/state/rebuild.ts), and an answer the script does not give is a bug, not a silent default.
 */
export function answerOf<T extends string>(code: number, names: Readonly<Record<number, T>>): T | 'unverified' {
  if (code === UNVERIFIED) return 'unverified';
  const name = names[code];
  if (name === undefined) throw new Error(`a script answered ${code}, which it never should`);
  return name;
}

/** What an apply script answered: applied now, applied before (nothing changed), or the state needs verifying first. */
export type ApplyCode = 'applied' | 'already_applied' | 'unverified';
export const APPLY_CODES: Readonly<Record<number, Exclude<ApplyCode, 'unverified'>>> = { 1: 'applied', 0: 'already_applied' };

/** A script's text, each `-- #include <file>` line replaced by that file (code several scripts share). */
function scriptText(file: string): string {
  return fs
    .readFileSync(path.join(SCRIPT_DIR, file), 'utf8')
    .replace(/^-- #include (\S+)$/gm, (_, lib: string) => fs.readFileSync(path.join(SCRIPT_DIR, lib), 'utf8'));
}

export function defineScripts(redis: RedisClient): RedisClient & ScriptCommands {
  for (const [name, file] of Object.entries(SCRIPTS)) {
    if (name in redis) continue;
    redis.defineCommand(name, { numberOfKeys: Number(/-(\d+)\.lua$/.exec(file)![1]), lua: scriptText(file) });
    if (isCluster(redis) && !NO_REPLICA_WAIT.has(name)) {
      // The script with the count of replicas connected, then (when there are) a WAIT: each pipeline carries a
      // key of the script's slot, so both go to its primary, on the one connection the client keeps to it.
      // A pipeline copies the client's commands, this one too: called on a pipeline, it only queues the script.
      const direct = (redis as unknown as Record<string, (...a: Arg[]) => unknown>)[name]!;
      Object.defineProperty(redis, name, {
        value: function (this: unknown, ...args: Arg[]) {
          if (this !== redis) return direct.apply(this, args);
          return replicated(redis, name, args);
        },
      });
    }
  }
  return redis as RedisClient & ScriptCommands;
}

/** Runs a write script on a cluster and waits for a replica of its primary to have it (above). */
async function replicated(redis: RedisClient, name: string, args: Arg[]): Promise<unknown> {
  const pipe = redis.pipeline() as unknown as Record<string, (...a: Arg[]) => Pipelined>;
  const [[err, answer], [, info]] = (await pipe[name]!(...args)
    .info('replication')
    .exec()) as [[Error | null, unknown], [Error | null, string]];
  if (err) throw err;
  if (Number(/connected_slaves:(\d+)/.exec(info ?? '')?.[1] ?? 0) === 0) return answer;
  const [, [, acked]] = (await redis.pipeline().exists(String(args[0])).wait(1, REPLICA_WAIT_MS).exec()) as [unknown, [Error | null, number]];
  if (!(acked >= 1)) throw new ReplicaLagError(`${name}: no replica confirmed the write within ${REPLICA_WAIT_MS} ms`);
  return answer;
}

/**
 * Every key of a project carries its hash tag, so one script touches one Redis Cluster slot, and projects
 * spread over a cluster's primaries. Redis hashes the first `{…}` of a key, so the tag comes first: the
 * prefix's own braces (a cluster's QUEUE_PREFIX, `{lookout}`, which keeps each queue in one slot) are left out.
 */
export function projectKeys(prefix: string, project: number) {
  const base = `${prefix.replace(/[{}]/g, '')}:{p:${project}}:`;
  return {
    base,
    epoch: `${base}epoch`,
    rebuild: `${base}rebuild`,
    seq: `${base}seq`,
    applied: `${base}applied`,
    dirty: `${base}dirty`,
    eseq: `${base}eseq`,
    eapplied: `${base}eapplied`,
    edirty: `${base}edirty`,
    /** which layout of the issue state (and its list indexes) the project's keys follow */
    layout: `${base}layout`,
    /** which layout of the session state the project's keys follow */
    sessionLayout: `${base}slayout`,
    /** the session table's counters (scripts/lib/session-table.lua) */
    sessionTable: `${base}sm`,
  };
}

/** A project's keys matching `pattern` under its prefix, in chunks (they share the project's slot; a cluster is scanned on each primary). */
export async function* scanProject(redis: RedisClient, base: string, pattern: string): AsyncGenerator<string[]> {
  for (const node of primaries(redis)) {
    for await (const found of node.scanStream({ match: `${base}${pattern}`, count: 1000 })) {
      if ((found as string[]).length > 0) yield found as string[];
    }
  }
}

/** Deletes a project's keys: the ones named, and those under its prefix matching any pattern (rebuilds only). */
export async function dropProjectKeys(redis: RedisClient, base: string, patterns: string[], exact: string[]): Promise<void> {
  if (exact.length > 0) await redis.del(...exact);
  for (const pattern of patterns) {
    for await (const found of scanProject(redis, base, pattern)) await redis.unlink(...found); // one slot: one command
  }
}
