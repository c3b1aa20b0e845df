/**
 * Uptime probes (issue 68): `probes`, each probe's configuration (`_id` `<project>:<n>`, n from the project's
 * counter), and `probe_results`, every check with its latency and reason (`_id` `<project>:<n>:<at, 15 digits>`, so
 * a probe's results are one `_id` range in time order).
 */
import type { Db } from 'mongodb';
import type { CheckResult, ProbeConfig } from '../domain/probes.ts';
import { nextId } from './counters.store.ts';
import { sortableMs } from './mongo.ts';

export interface ProbeDoc {
  _id: string;
  project_id: number;
  id: number;
  config: ProbeConfig;
  created_at: Date;
}

export interface ProbeResultDoc extends CheckResult {
  _id: string;
  project_id: number;
  probe: number;
}

const resultsPrefix = (project: number, probe: number) => `${project}:${probe}:`;

export function makeProbesStore(db: Db) {
  const probes = db.collection<ProbeDoc>('probes');
  const results = db.collection<ProbeResultDoc>('probe_results');
  return {
    async add(project: number, config: ProbeConfig, now: Date): Promise<ProbeDoc> {
      const id = await nextId(db, `probes:${project}`);
      const doc: ProbeDoc = { _id: `${project}:${id}`, project_id: project, id, config, created_at: now };
      await probes.insertOne(doc);
      return doc;
    },
    get: (project: number, id: number) => probes.findOne({ _id: `${project}:${id}` }),
    ofProject: (project: number) => probes.find({ project_id: project }).sort({ id: 1 }).toArray(),
    /** Removes a probe and its results; whether there was one. */
    async remove(project: number, id: number): Promise<boolean> {
      const prefix = resultsPrefix(project, id);
      await results.deleteMany({ _id: { $gte: prefix, $lt: `${prefix}~` } });
      return (await probes.deleteOne({ _id: `${project}:${id}` })).deletedCount === 1;
    },
    /** Records a check (again: the same record). */
    async saveResult(project: number, probe: number, r: CheckResult): Promise<void> {
      const doc: ProbeResultDoc = { _id: `${resultsPrefix(project, probe)}${sortableMs(r.at)}`, project_id: project, probe, ...r };
      await results.replaceOne({ _id: doc._id }, doc, { upsert: true });
    },
    /** A probe's results since `since` (ms), oldest first. */
    results: (project: number, probe: number, since: number) => {
      const prefix = resultsPrefix(project, probe);
      return results
        .find({ _id: { $gte: `${prefix}${sortableMs(since)}`, $lt: `${prefix}~` } })
        .sort({ _id: 1 })
        .toArray();
    },
    /** Results older than `before` (ms) go (the retention period). */
    async forgetResults(project: number, probe: number, before: number): Promise<number> {
      const prefix = resultsPrefix(project, probe);
      return (await results.deleteMany({ _id: { $gte: prefix, $lt: `${prefix}${sortableMs(before)}` } })).deletedCount;
    },
  };
}
export type ProbesStore = ReturnType<typeof makeProbesStore>;
