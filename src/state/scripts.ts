/**
 * The Redis scripts of the hot state (./scripts/*.lua), loaded once per
 * connection with ioredis' defineCommand and called only through the typed
 * wrappers in this folder. A file's name ends in its number of keys, as
 * BullMQ names its scripts; each file's opening comment lists its keys,
 * arguments and answers.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';

const SCRIPT_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'scripts');

const SCRIPTS = {
  mergeSessions: 'merge-sessions-4.lua',
  snapshotRollups: 'snapshot-rollups-3.lua',
  clearDirty: 'clear-dirty-1.lua',
  applyEvents: 'apply-events-4.lua',
  applyBurst: 'apply-burst-3.lua',
  setIssueStatus: 'set-issue-status-3.lua',
  snapshotIssues: 'snapshot-issues-3.lua',
  listIssues: 'list-issues-3.lua',
  raiseCounter: 'raise-counter-1.lua',
  raiseNotice: 'raise-notice-2.lua',
  routeNotice: 'route-notice-4.lua',
  takeDigest: 'take-digest-4.lua',
  endDecisions: 'end-decisions-2.lua',
} as const;

type Arg = string | number;
export interface ScriptCommands {
  mergeSessions(epoch: string, seq: string, applied: string, dirty: string, ...argv: Arg[]): Promise<[number, number, number, number]>;
  snapshotRollups(epoch: string, seq: string, dirty: string, base: string): Promise<[number, number, ...[string, string, string[]][]]>;
  clearDirty(dirty: string, ...pairs: string[]): Promise<number>;
  applyEvents(epoch: string, seq: string, applied: string, dirty: string, ...argv: Arg[]): Promise<[number, number, number]>;
  applyBurst(epoch: string, seq: string, dirty: string, ...argv: Arg[]): Promise<number>;
  setIssueStatus(epoch: string, seq: string, dirty: string, ...argv: Arg[]): Promise<number>;
  snapshotIssues(epoch: string, seq: string, dirty: string, base: string, ...ids: string[]): Promise<[number, number, ...[string, string, string[], string[]][]]>;
  listIssues(epoch: string, order: string, counts: string, ...argv: Arg[]): Promise<[number, number, ...(string | (string | null)[])[]]>;
  raiseCounter(counter: string, atLeast: number): Promise<number>;
  raiseNotice(mark: string, outbox: string, ttlMs: number, trigger: string): Promise<number>;
  routeNotice(sent: string, buffer: string, pending: string, record: string, ...argv: Arg[]): Promise<string[]>;
  takeDigest(sent: string, buffer: string, pending: string, digest: string, ...argv: Arg[]): Promise<string[]>;
  endDecisions(active: string, log: string, ...argv: Arg[]): Promise<string[]>;
}

/** What an apply script answered: applied now, applied before (nothing changed), or the state needs verifying first. */
export type ApplyCode = 'applied' | 'already_applied' | 'unverified';
export const APPLY_CODES: Readonly<Record<number, ApplyCode>> = { 1: 'applied', 0: 'already_applied', [-1]: 'unverified' };

export function defineScripts(redis: Redis): Redis & ScriptCommands {
  for (const [name, file] of Object.entries(SCRIPTS)) {
    if (name in redis) continue;
    redis.defineCommand(name, { numberOfKeys: Number(/-(\d+)\.lua$/.exec(file)![1]), lua: fs.readFileSync(path.join(SCRIPT_DIR, file), 'utf8') });
  }
  return redis as Redis & ScriptCommands;
}

/** Every key of a project carries its hash tag, so one script touches one Redis Cluster slot. */
export function projectKeys(prefix: string, project: number) {
  const base = `${prefix}:{p:${project}}:`;
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
  };
}

/** Deletes a project's keys: the ones named, and those under its prefix matching any pattern (rebuilds only). */
export async function dropProjectKeys(redis: Redis, base: string, patterns: string[], exact: string[]): Promise<void> {
  await redis.del(...exact);
  for (const pattern of patterns) {
    for await (const found of redis.scanStream({ match: `${base}${pattern}`, count: 1000 })) {
      if ((found as string[]).length > 0) await redis.unlink(...(found as string[]));
    }
  }
}
