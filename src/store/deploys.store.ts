/**
 * Deploys of a release (issue 70: `sentry-cli deploys new`, shown on the release's page). One document each, read by
 * `_id` only (FerretDB answers no query by another field from an index): `<project>:<version>:<n>`, n from the
 * release's counter (`deploys:<project>:<version>`), so a release's newest deploys are the ids below the counter.
 */
import type { Db } from 'mongodb';
import { insertNumbered } from './counters.store.ts';

export interface DeployDoc {
  _id: string;
  project_id: number;
  version: string;
  /** its number among the release's deploys, from 1 */
  n: number;
  environment: string;
  name: string | null;
  url: string | null;
  started_at: Date | null;
  finished_at: Date;
}

export type NewDeploy = Pick<DeployDoc, 'environment' | 'name' | 'url' | 'started_at' | 'finished_at'>;

/** How many of a release's newest deploys a read returns. */
export const DEPLOYS_READ = 100;

const counterOf = (project: number, version: string) => `deploys:${project}:${version}`;

export function makeDeploysStore(db: Db) {
  const deploys = db.collection<DeployDoc>('deploys');
  const counters = db.collection<{ _id: string; seq: number }>('counters');
  return {
    /** Records a deploy of the project's release under the release's next number. */
    add(project: number, version: string, deploy: NewDeploy): Promise<DeployDoc> {
      return insertNumbered(db, counterOf(project, version), 'deploys', (n): DeployDoc => ({ _id: `${project}:${version}:${n}`, project_id: project, version, n, ...deploy }));
    },
    /** Each release's deploys, newest first (its last DEPLOYS_READ). */
    async ofReleases(project: number, versions: string[]): Promise<Map<string, DeployDoc[]>> {
      const out = new Map<string, DeployDoc[]>(versions.map((v) => [v, []]));
      if (versions.length === 0) return out;
      const seqs = await counters.find({ _id: { $in: versions.map((v) => counterOf(project, v)) } }).toArray();
      const ids = seqs.flatMap((c) => {
        const version = c._id.slice(counterOf(project, '').length);
        return Array.from({ length: Math.min(c.seq, DEPLOYS_READ) }, (_, i) => `${project}:${version}:${c.seq - i}`);
      });
      if (ids.length === 0) return out;
      for (const doc of await deploys.find({ _id: { $in: ids } }).toArray()) out.get(doc.version)?.push(doc);
      for (const list of out.values()) list.sort((a, b) => b.n - a.n);
      return out;
    },
  };
}
export type DeploysStore = ReturnType<typeof makeDeploysStore>;
