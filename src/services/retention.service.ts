/**
 * Event retention: error events and sign-in attempts received more than a
 * project's retention ago (its `event_retention_days`, else
 * EVENT_RETENTION_DAYS) are deleted, in chunks, by the hourly maintenance job.
 *
 * An event's attachments go with it; user feedback goes by its own time of
 * receipt (an issue's list of it drops the ids it no longer finds).
 *
 * Issues stay, with their counters: each chunk's error events are tallied
 * per issue first (src/store/expired.store.ts), so a later recount adds what
 * was deleted, and taken off their issues' event lists in Redis. Chunks are
 * small and the job pauses between them, so the store's one writer (FerretDB)
 * goes back to ingestion between two deletes.
 */
import crypto from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventSpread } from '../domain/client-keys.ts';
import type { Logger } from '../log.ts';
import type { IssuesState } from '../state/issues.state.ts';
import type { StateKeeper } from '../state/rebuild.ts';
import type { ExpiredEvent } from '../store/events.store.ts';
import type { RetentionChunk, TallyChange } from '../store/expired.store.ts';
import type { Stores } from '../store/index.ts';
import { groupBy } from '../util/group-by.ts';

const DAY_MS = 24 * 3600_000;

export interface RetentionOptions {
  /** events deleted per chunk */
  chunk: number;
  /** pause between chunks */
  pauseMs: number;
}

export const RETENTION_CHUNKS: RetentionOptions = { chunk: 500, pauseMs: 20 };

export interface RetentionDeps {
  stores: Pick<Stores, 'events' | 'expired' | 'projects' | 'attachments' | 'feedback'>;
  issuesState: IssuesState;
  keeper: StateKeeper;
  defaultDays: number;
  log: Logger;
}

/** Deletes every expired event; returns how many of each kind. */
export async function expireEvents(deps: RetentionDeps, now: Date, opts: RetentionOptions = RETENTION_CHUNKS): Promise<{ error_events: number; sign_in_attempts: number }> {
  const deleted = { error_events: 0, sign_in_attempts: 0 };
  for (const chunk of await deps.stores.expired.unfinished()) await finish(deps, chunk); // a run that died on the way

  const projects = await deps.stores.projects.list();
  const daysOf = new Map(projects.map((p) => [p._id, p.event_retention_days ?? deps.defaultDays]));
  const custom = projects.filter((p) => daysOf.get(p._id) !== deps.defaultDays).map((p) => p._id);
  // One read per retention in use: the default's covers every project without one of its own (and any deleted project).
  const reads = [
    { days: deps.defaultDays, projects: { notIn: custom } },
    ...[...groupBy(custom, (id) => daysOf.get(id)!)].map(([days, ids]) => ({ days, projects: { in: ids } })),
  ];
  for (const read of reads) {
    const cursor = deps.stores.events.expiredOf(new Date(now.getTime() - read.days * DAY_MS), read.projects);
    let docs: ExpiredEvent[] = [];
    const flush = async () => {
      const counts = await expireChunk(deps, docs);
      deleted.error_events += counts.error;
      deleted.sign_in_attempts += counts.security;
      docs = [];
      await sleep(opts.pauseMs);
    };
    for await (const doc of cursor) {
      docs.push(doc);
      if (docs.length >= opts.chunk) await flush();
    }
    if (docs.length > 0) await flush();
    await deps.stores.feedback.deleteOlder(new Date(now.getTime() - read.days * DAY_MS), read.projects);
    // Packed sign-in attempts: a document and its keys at a time (no issue counts them, so nothing is tallied).
    const packed = deps.stores.events.attempts.expiredOf(new Date(now.getTime() - read.days * DAY_MS), read.projects);
    let sincePause = 0;
    for await (const doc of packed) {
      const n = await deps.stores.events.attempts.delete(doc._id);
      deleted.sign_in_attempts += n;
      sincePause += n;
      if (sincePause >= opts.chunk) {
        sincePause = 0;
        await sleep(opts.pauseMs);
      }
    }
  }
  if (deleted.error_events + deleted.sign_in_attempts > 0) deps.log.info({ deleted }, 'retention deleted expired events');
  return deleted;
}

/** Tallies, journals and deletes one chunk. */
async function expireChunk(deps: RetentionDeps, docs: ExpiredEvent[]): Promise<{ error: number; security: number }> {
  const tallies: TallyChange[] = [];
  for (const [project, errors] of groupBy(
    docs.filter((d) => d.kind === 'error' && d.fingerprint),
    (d) => d.project_id,
  )) {
    await deps.keeper.verify(project, new Date()); // the fingerprint map is read from Redis
    const issues = await deps.issuesState.knownIssueIds(project, errors.map((d) => d.fingerprint!));
    // An event whose fingerprint has no issue was never counted (its group is still waiting for its job): nothing to keep.
    for (const [issue, events] of groupBy(errors.filter((d) => issues.has(d.fingerprint!)), (d) => issues.get(d.fingerprint!)!)) {
      const spread = new Map<string, number>();
      for (const e of events) {
        // (an event's tags are in its payload, not read here: a rebuild counts only the tags of events still stored)
        for (const field of eventSpread(e)) spread.set(field, (spread.get(field) ?? 0) + 1);
      }
      tallies.push({ issue, project_id: project, events: events.map((e) => e.event_id), spread: [...spread].map(([key, n]) => ({ key, n })) });
    }
  }
  const chunk: RetentionChunk = { _id: crypto.randomUUID(), ids: docs.map((d) => d._id), tallies };
  await deps.stores.expired.begin(chunk);
  await finish(deps, chunk);
  const errors = docs.filter((d) => d.kind === 'error').length;
  return { error: errors, security: docs.length - errors };
}

/** The steps after the journal entry; each may run again after a crash. */
async function finish(deps: RetentionDeps, chunk: RetentionChunk): Promise<void> {
  await deps.stores.attachments.deleteOfEvents(chunk.ids);
  await deps.stores.events.deleteIds(chunk.ids);
  for (const change of chunk.tallies) await deps.stores.expired.add(chunk._id, change);
  for (const [project, changes] of groupBy(chunk.tallies, (t) => t.project_id)) await deps.issuesState.forgetEvents(project, changes);
  await deps.stores.expired.end(chunk._id);
}
