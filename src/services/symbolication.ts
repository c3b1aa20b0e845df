/**
 * Source maps applied in the worker, before grouping (issue 52): an error event the API flagged (`js_frames`) is read
 * back, its JavaScript frames mapped (src/domain/sourcemaps.ts) through the maps src/services/sourcemap-lookup.ts
 * finds, and stored again with the mapped stack (the minified one kept beside it) and the fingerprint of the mapped
 * frames, before its job counts it. So two builds of the same code group into one issue, and a recount from the
 * stored events groups them as the job did. Mapping an event again gives the same result: a retried job changes
 * nothing.
 *
 * An event with a frame no map was found for is remembered (the latest 1,000 per project); when a bundle arrives
 * those are mapped again (`sourcemaps.remap`), each staying in the issue it was counted in.
 */
import { describeError, fingerprintOf, type ErrorEventShape } from '../domain/fingerprint.ts';
import { mapRequests, symbolicate } from '../domain/sourcemaps.ts';
import type { Obj } from '../domain/obj.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { RedisClient } from '../redis/connect.ts';
import { payloadOf, type EventDoc, type EventsStore } from '../store/events.store.ts';
import type { SourcemapLookup } from './sourcemap-lookup.ts';

/** What mapping reads and changes of a job's entry (src/queues/jobs/events.job.ts' EventEntry). */
type Entry = Pick<EventDoc, '_id' | 'kind' | 'js_frames' | 'at' | 'fingerprint'> & { title: string; culprit: string; exception_type: string | null };

/** Events a project remembers as waiting for a map. */
const REMEMBERED = 1000;

export function makeSymbolication(deps: { events: EventsStore; lookup: SourcemapLookup; redis: RedisClient; prefix: string; log: Logger; metrics: Pick<Metrics, 'sourcemapEvents' | 'sourcemapFrames'> }) {
  const { events, lookup, redis } = deps;
  const waitingKey = (project: number) => `${deps.prefix}:sourcemaps:unmapped:${project}`;

  /** Maps one stored event's frames (timed, each frame counted by its outcome); null when it has none a map could apply to. */
  async function mapped(doc: EventDoc) {
    const started = performance.now();
    const body = payloadOf(doc);
    const requests = mapRequests(body);
    if (requests.length === 0) return null;
    const sources = await lookup.sourcesFor(doc.project_id, doc.release, typeof body.dist === 'string' ? body.dist : null, requests);
    const result = symbolicate(body, sources);
    deps.metrics.sourcemapEvents.observe((performance.now() - started) / 1000);
    if (result.mapped > 0) deps.metrics.sourcemapFrames.inc({ result: 'mapped' }, result.mapped);
    for (const [reason, n] of Object.entries(result.reasons)) deps.metrics.sourcemapFrames.inc({ result: reason }, n);
    return result;
  }

  return {
    /**
     * Maps the flagged error events among a project's entries, storing each mapped event and changing its entry's
     * fingerprint, title and culprit to the mapped frames' before the job groups it.
     */
    async apply(project: number, entries: Entry[]): Promise<{ mapped: number; unmapped: number }> {
      const flagged = entries.filter((e) => e.kind === 'error' && e.js_frames);
      const totals = { mapped: 0, unmapped: 0 };
      if (flagged.length === 0) return totals;
      const docs = new Map((await events.getMany(flagged.map((e) => e._id))).filter((d): d is EventDoc => 'payload' in d).map((d) => [d._id, d]));
      const rewrites: { _id: string; payload: Obj; fingerprint: string }[] = [];
      const waiting: { at: number; id: string }[] = [];
      for (const entry of flagged) {
        const doc = docs.get(entry._id);
        if (doc && !doc.js_frames) {
          // mapped by an earlier delivery of this job: grouped as it was then
          Object.assign(entry, { fingerprint: doc.fingerprint, ...describeError(payloadOf(doc) as ErrorEventShape) });
          continue;
        }
        const result = doc && (await mapped(doc));
        if (!result || result.mapped + result.unmapped === 0) continue;
        totals.mapped += result.mapped;
        totals.unmapped += result.unmapped;
        const fingerprint = fingerprintOf(result.event as ErrorEventShape);
        Object.assign(entry, { fingerprint, ...describeError(result.event as ErrorEventShape) });
        rewrites.push({ _id: entry._id, payload: result.event, fingerprint });
        if (result.unmapped > 0) waiting.push({ at: entry.at.getTime(), id: entry._id });
      }
      await events.rewrite(rewrites);
      if (waiting.length > 0) {
        await redis
          .multi()
          .zadd(waitingKey(project), ...waiting.flatMap((w) => [w.at, w.id]))
          .zremrangebyrank(waitingKey(project), 0, -REMEMBERED - 1)
          .exec();
      }
      return totals;
    },

    /** Maps a project's remembered events again, a bundle having arrived; each keeps its issue. */
    async remap(project: number): Promise<{ remapped: number; waiting: number }> {
      const ids = await redis.zrange(waitingKey(project), 0, -1);
      if (ids.length === 0) return { remapped: 0, waiting: 0 };
      const docs = (await events.getMany(ids)).filter((d): d is EventDoc => 'payload' in d);
      const rewrites: { _id: string; payload: Obj }[] = [];
      const found = new Set(docs.map((d) => d._id));
      const done = new Set(ids.filter((id) => !found.has(id))); // deleted since (retention)
      for (const doc of docs) {
        const result = await mapped(doc);
        if (result && result.mapped > 0) rewrites.push({ _id: doc._id, payload: result.event });
        if (!result || result.unmapped === 0) done.add(doc._id);
      }
      await events.rewrite(rewrites);
      if (done.size > 0) await redis.zrem(waitingKey(project), ...done);
      deps.log.info({ project, remapped: rewrites.length, waiting: ids.length - done.size }, 'events mapped again after a source map upload');
      return { remapped: rewrites.length, waiting: ids.length - done.size };
    },
  };
}
export type Symbolication = ReturnType<typeof makeSymbolication>;
