/**
 * CrowdSec bouncers bound to a project (issue 49): each pulls the project's decisions with its own key. `_id` is the
 * SHA-256 of the key, so a pull finds its bouncer through the `_id` index and the key itself is never stored; `id` is
 * the short public name a bouncer is listed and revoked by.
 */
import type { Db } from 'mongodb';

export interface BouncerDoc {
  _id: string;
  id: string;
  project_id: number;
  name: string;
  /** the key's first characters, to tell keys apart in a list */
  hint: string;
  created_at: Date;
  /** its latest pull: when, from which address, and the User-Agent naming the bouncer and its version */
  last_pull: { at: Date; ip: string; user_agent: string } | null;
}

/** How stale a bouncer's last pull may be before a pull records it again (bouncers pull every 10 s or so). */
const LAST_PULL_STEP_MS = 60_000;

export function makeBouncersStore(db: Db) {
  const bouncers = db.collection<BouncerDoc>('bouncers');
  return {
    async create(doc: BouncerDoc): Promise<void> {
      await bouncers.insertOne(doc);
    },
    byHash(hash: string): Promise<BouncerDoc | null> {
      return bouncers.findOne({ _id: hash });
    },
    /** A project's bouncers, oldest first (a rare read by a secondary field). */
    ofProject(project: number): Promise<BouncerDoc[]> {
      return bouncers.find({ project_id: project }).sort({ created_at: 1 }).toArray();
    },
    /** Which of the projects named (none named: any) have a bouncer (a rare read by a secondary field). */
    async projects(among?: number[]): Promise<number[]> {
      const found = await bouncers.find(among ? { project_id: { $in: among } } : {}, { projection: { project_id: 1 } }).toArray();
      return [...new Set(found.map((b) => b.project_id))];
    },
    async revoke(project: number, id: string): Promise<boolean> {
      return (await bouncers.deleteOne({ id, project_id: project })).deletedCount === 1;
    },
    /**
     * Notes a pull, unless one was noted within the last minute from the same address and bouncer version; the
     * document given (a cached one) then holds it too.
     */
    async pulled(doc: BouncerDoc, pull: { at: Date; ip: string; user_agent: string }): Promise<void> {
      const last = doc.last_pull;
      if (last && last.ip === pull.ip && last.user_agent === pull.user_agent && pull.at.getTime() - last.at.getTime() < LAST_PULL_STEP_MS) return;
      doc.last_pull = pull;
      await bouncers.updateOne({ _id: doc._id }, { $set: { last_pull: pull } });
    },
  };
}
export type BouncersStore = ReturnType<typeof makeBouncersStore>;
