/**
 * instance_id → project. The instance id is the document's _id, so the store
 * itself guarantees that one installation reports to at most one project.
 */
import type { Db } from 'mongodb';
import { isDuplicateKey } from './mongo.ts';

export interface BindingDoc {
  _id: string;
  project_id: number;
  created_at: Date;
}

export function makeBindingsStore(db: Db) {
  const bindings = db.collection<BindingDoc>('bindings');
  return {
    /** Claims `instanceId` for the project; returns the project that holds it afterwards. */
    async claim(
      instanceId: string,
      projectId: number,
      now: Date,
    ): Promise<{ projectId: number; created: boolean; createdAt: Date }> {
      try {
        await bindings.insertOne({ _id: instanceId, project_id: projectId, created_at: now });
        return { projectId, created: true, createdAt: now };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        const existing = await bindings.findOne({ _id: instanceId });
        if (!existing) return this.claim(instanceId, projectId, now);
        return { projectId: existing.project_id, created: false, createdAt: existing.created_at };
      }
    },
    async release(instanceId: string, projectId: number): Promise<void> {
      await bindings.deleteOne({ _id: instanceId, project_id: projectId });
    },
  };
}
export type BindingsStore = ReturnType<typeof makeBindingsStore>;
