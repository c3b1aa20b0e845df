/**
 * Issues, one per (project, fingerprint). Counters are never incremented
 * blindly: they are set with $max from recounts of the stored events, so
 * retries, duplicate deliveries and parallel workers cannot double-count.
 */
import type { Db, Filter, IndexDescription, Sort } from 'mongodb';
import type { IssueStatus } from '../domain/issue-status.ts';
import { nextId } from './counters.store.ts';
import { ensureIndexes, isDuplicateKey } from './mongo.ts';

export const MAX_COMPANIES = 64;

export interface IssueDoc {
  _id: number;
  project_id: number;
  kind: 'error' | 'security';
  fingerprint: string;
  title: string;
  exception_type: string | null;
  level: string;
  status: IssueStatus;
  first_seen: Date;
  last_seen: Date;
  event_count: number;
  last_release: string | null;
  regression_count: number;
  resolved_count: number;
  resolved_at: Date | null;
  resolved_release: string | null;
  last_regressed_at: Date | null;
  last_regression_kind: 'same_release' | 'new_release' | null;
  companies: string[];
  created_at: Date;
}

export const issueIndexes: IndexDescription[] = [
  { key: { project_id: 1, fingerprint: 1 }, name: 'project_fingerprint', unique: true },
  { key: { project_id: 1, status: 1, last_seen: -1 }, name: 'project_status_last_seen' },
];

export type IssueSeed = Pick<IssueDoc, 'project_id' | 'kind' | 'fingerprint' | 'title' | 'exception_type' | 'level' | 'first_seen' | 'last_seen' | 'last_release'>;

export function makeIssuesStore(db: Db) {
  const issues = db.collection<IssueDoc>('issues');
  return {
    collection: issues,
    async ensureIndexes() {
      await ensureIndexes(issues, issueIndexes);
    },
    /** The issue of (project, fingerprint), created on first sight. */
    async findOrCreate(seed: IssueSeed, now: Date): Promise<IssueDoc> {
      const existing = await issues.findOne({ project_id: seed.project_id, fingerprint: seed.fingerprint });
      if (existing) return existing;
      return this.insertNew(seed, now);
    },
    async insertNew(seed: IssueSeed, now: Date, attempt = 1): Promise<IssueDoc> {
      const doc: IssueDoc = {
        _id: await nextId(db, 'issues'),
        ...seed,
        status: 'unresolved',
        event_count: 0,
        regression_count: 0,
        resolved_count: 0,
        resolved_at: null,
        resolved_release: null,
        last_regressed_at: null,
        last_regression_kind: null,
        companies: [],
        created_at: now,
      };
      try {
        await issues.insertOne(doc);
        return doc;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        const raced = await issues.findOne({ project_id: seed.project_id, fingerprint: seed.fingerprint });
        if (raced) return raced;
        // The id was taken: FerretDB v1 can hand one counter value to two concurrent callers.
        if (attempt >= 10) throw err;
        return this.insertNew(seed, now, attempt + 1);
      }
    },
    get(projectId: number, id: number): Promise<IssueDoc | null> {
      return issues.findOne({ _id: id, project_id: projectId });
    },
    /** Monotonic counters: each only ever moves toward the truth. */
    async advance(id: number, fields: { event_count: number; first_seen: Date; last_seen: Date }): Promise<void> {
      await issues.updateOne(
        { _id: id },
        { $max: { event_count: fields.event_count, last_seen: fields.last_seen }, $min: { first_seen: fields.first_seen } },
      );
    },
    /** Fields that follow the newest event: set only if no newer event has been seen. */
    async followLatest(id: number, at: Date, set: Partial<Pick<IssueDoc, 'last_release' | 'level' | 'title'>>): Promise<void> {
      if (Object.keys(set).length > 0) await issues.updateOne({ _id: id, last_seen: { $lte: at } }, { $set: set });
    },
    async addCompany(id: number, company: string): Promise<void> {
      await issues.updateOne(
        { _id: id, [`companies.${MAX_COMPANIES - 1}`]: { $exists: false } } as Filter<IssueDoc>,
        { $addToSet: { companies: company } },
      );
    },
    /**
     * The regression of a resolved issue, applied at most once per resolve:
     * only while it is still resolved, and only for an event received after the resolve.
     */
    async regress(id: number, receivedAt: Date, kind: 'same_release' | 'new_release', now: Date): Promise<boolean> {
      const result = await issues.updateOne(
        { _id: id, status: 'resolved', resolved_at: { $lt: receivedAt } },
        { $set: { status: 'unresolved', last_regressed_at: now, last_regression_kind: kind }, $inc: { regression_count: 1 } },
      );
      return result.modifiedCount === 1;
    },
    async setStatus(projectId: number, id: number, status: IssueStatus, now: Date): Promise<IssueDoc | null> {
      const current = await issues.findOne({ _id: id, project_id: projectId });
      if (!current) return null;
      if (status === 'resolved') {
        return issues.findOneAndUpdate(
          { _id: id, project_id: projectId },
          { $set: { status, resolved_at: now, resolved_release: current.last_release }, $inc: { resolved_count: 1 } },
          { returnDocument: 'after' },
        );
      }
      return issues.findOneAndUpdate({ _id: id, project_id: projectId }, { $set: { status } }, { returnDocument: 'after' });
    },
    async page(projectId: number, q: { status: IssueStatus; order: 'last_seen' | 'id'; limit: number; offset: number }) {
      const filter = { project_id: projectId, status: q.status };
      const sort: Sort = q.order === 'id' ? { _id: 1 } : { last_seen: -1, _id: -1 };
      const [items, total] = await Promise.all([
        issues.find(filter).sort(sort).skip(q.offset).limit(q.limit).toArray(),
        issues.countDocuments(filter),
      ]);
      return { items, total };
    },
  };
}
export type IssuesStore = ReturnType<typeof makeIssuesStore>;
