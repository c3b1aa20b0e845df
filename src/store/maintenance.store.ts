/** Maintenance windows (src/domain/maintenance.ts): `maintenance`, `_id` `<project>:<n>`, n from the project's counter. */
import type { Db } from 'mongodb';
import type { MaintenanceWindow } from '../domain/maintenance.ts';
import { nextId } from './counters.store.ts';

export interface MaintenanceDoc {
  _id: string;
  project_id: number;
  id: number;
  from: Date;
  to: Date;
  monitor: string | null;
  created_at: Date;
}

export const windowOf = (d: MaintenanceDoc): MaintenanceWindow => ({ from: d.from.getTime(), to: d.to.getTime(), monitor: d.monitor });

export function makeMaintenanceStore(db: Db) {
  const windows = db.collection<MaintenanceDoc>('maintenance');
  return {
    async add(project: number, w: MaintenanceWindow, now: Date): Promise<MaintenanceDoc> {
      const id = await nextId(db, `maintenance:${project}`);
      const doc: MaintenanceDoc = { _id: `${project}:${id}`, project_id: project, id, from: new Date(w.from), to: new Date(w.to), monitor: w.monitor, created_at: now };
      await windows.insertOne(doc);
      return doc;
    },
    ofProject: (project: number) => windows.find({ project_id: project }).sort({ id: 1 }).toArray(),
    async remove(project: number, id: number): Promise<boolean> {
      return (await windows.deleteOne({ _id: `${project}:${id}` })).deletedCount === 1;
    },
  };
}
export type MaintenanceStore = ReturnType<typeof makeMaintenanceStore>;
