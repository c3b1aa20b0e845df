/**
 * Issues, one per (project, fingerprint), as the reads serve them. Their
 * hot state lives in Redis (src/state/issues.state.ts); the flusher writes
 * changed issues here in bulk. Each carries `v`, the project's event change
 * counter when it was read, and a write never replaces a newer one.
 * `issue_flush` holds, per project, the counter the last flush covered.
 */
import type { Db, IndexDescription, Sort } from 'mongodb';
import type { IssueStatus } from '../domain/issue-status.ts';
import { ensureIndexes } from './mongo.ts';
import { makeFlushMarks, writeNewer } from './versioned.ts';

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
  /** `_id` of the newest event (the single-issue read shows its payload) */
  latest_event: string | null;
}

export const issueIndexes: IndexDescription[] = [
  { key: { project_id: 1, fingerprint: 1 }, name: 'project_fingerprint', unique: true },
  { key: { project_id: 1, status: 1, last_seen: -1 }, name: 'project_status_last_seen' },
];

export function makeIssuesStore(db: Db) {
  const issues = db.collection<IssueDoc & { v: number }>('issues');
  const marks = makeFlushMarks(db, 'issue_flush');
  return {
    collection: issues,
    async ensureIndexes() {
      await ensureIndexes(issues, issueIndexes);
    },
    /** Writes issues read at change counter `v`, never over a newer copy. */
    write: (docs: IssueDoc[], v: number) => writeNewer(issues, docs.map((doc) => ({ ...doc, v }))),
    /** The event change counter of the project's last flush (0: never), written before its issues. */
    flushedSeq: marks.get,
    setFlushedSeq: marks.raise,
    /** Every issue of a project (rebuilding its Redis state only). */
    ofProject(projectId: number): Promise<IssueDoc[]> {
      return issues.find({ project_id: projectId }).toArray();
    },
    /** The highest issue id stored (0: none). */
    async maxId(): Promise<number> {
      const [top] = await issues.find({}, { projection: { _id: 1 } }).sort({ _id: -1 }).limit(1).toArray();
      return top?._id ?? 0;
    },
    get(projectId: number, id: number): Promise<IssueDoc | null> {
      return issues.findOne({ _id: id, project_id: projectId });
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
