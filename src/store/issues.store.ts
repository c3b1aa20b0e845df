/**
 * Issues, one per (project, fingerprint), as the reads serve them. Their
 * hot state lives in Redis (src/state/issues.state.ts); the flusher writes
 * changed issues here in bulk. Each carries `v`, the project's event change
 * counter when it was read, and a write never replaces a newer one.
 * `issue_flush` holds, per project, the counter the last flush covered.
 *
 * Stored, an issue's `_id` is its number as a 16-digit string: FerretDB
 * (SQLite) finds a document by `_id` through its index only when the `_id` is
 * a string (a number reads the whole collection: about 2 s at 20,000
 * documents), and the padding keeps string order numeric (`order=id`, the
 * highest id). Everything outside this file sees the number.
 */
import type { Db, IndexDescription } from 'mongodb';
import type { IssueStatus } from '../domain/issue-status.ts';
import { ensureIndexes } from './mongo.ts';
import { makeFlushMarks, writeNewer } from './versioned.ts';

export interface IssueDoc {
  _id: number;
  project_id: number;
  kind: 'error' | 'security' | 'monitor' | 'installation' | 'uptime';
  fingerprint: string;
  title: string;
  /** where it happened: `module or file in function` of the crashing in-app frame, or the transaction (older issues lack it) */
  culprit?: string;
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
  /** a security issue whose burst made no decision: why (its actor or address is allowlisted, or the project only monitors) */
  policy?: 'allowlisted' | 'monitoring' | null;
  /*
   * Triage (issue 50; issues stored before lack them): the release of its first event, the member it is assigned
   * to (email), a resolve that holds until a newer release, an ignore that ends at so many events or at a time,
   * and the release of its last regression.
   */
  first_release?: string | null;
  assignee?: string | null;
  resolved_in_next_release?: boolean;
  ignore_until_count?: number | null;
  ignore_until?: Date | null;
  regressed_release?: string | null;
}

export const issueIndexes: IndexDescription[] = [
  { key: { project_id: 1, fingerprint: 1 }, name: 'project_fingerprint', unique: true },
];

export const storedIssueId = (id: number): string => String(id).padStart(16, '0');

type StoredIssue = Omit<IssueDoc, '_id'> & { _id: string; v: number };

function fromStored({ _id, v: _v, ...doc }: StoredIssue): IssueDoc {
  return { ...doc, _id: Number(_id) };
}

export function makeIssuesStore(db: Db) {
  const issues = db.collection<StoredIssue>('issues');
  const marks = makeFlushMarks(db, 'issue_flush');
  /** Writes issues read at change counter `v`, never over a newer copy. */
  const write = (docs: IssueDoc[], v: number) => writeNewer(issues, docs.map((doc) => ({ ...doc, _id: storedIssueId(doc._id), v })));
  return {
    async ensureIndexes() {
      await ensureIndexes(issues, issueIndexes);
    },
    write,
    /**
     * A project's issues as read from Redis at change counter `seq`: the flush
     * mark first, then the documents, so a Redis that comes back behind the
     * mark is known to have lost state (src/state/rebuild.ts).
     */
    async writeFlushed(project: number, docs: IssueDoc[], seq: number): Promise<void> {
      await marks.raise(project, seq);
      await write(docs, seq);
    },
    /** The event change counter of the project's last flush (0: never). */
    flushedSeq: marks.get,
    /** Every issue of a project (rebuilding its Redis state only). */
    async ofProject(projectId: number): Promise<IssueDoc[]> {
      return (await issues.find({ project_id: projectId }).toArray()).map(fromStored);
    },
    /** The highest issue id stored (0: none). */
    async maxId(): Promise<number> {
      const [top] = await issues.find({}, { projection: { _id: 1 } }).sort({ _id: -1 }).limit(1).toArray();
      return top ? Number(top._id) : 0;
    },
    /** The project an issue id belongs to, once the issue is in MongoDB; null before. */
    async projectOf(id: number): Promise<number | null> {
      const doc = await issues.findOne({ _id: storedIssueId(id) }, { projection: { project_id: 1 } });
      return doc?.project_id ?? null;
    },
    /** Several by `_id` ($in, which FerretDB serves from its index: tools/ferretdb); another project's are left out. */
    async getMany(projectId: number, ids: number[]): Promise<IssueDoc[]> {
      if (ids.length === 0) return [];
      const found = await issues.find({ _id: { $in: ids.map(storedIssueId) } }).toArray();
      return found.filter((d) => d.project_id === projectId).map(fromStored);
    },
  };
}
export type IssuesStore = ReturnType<typeof makeIssuesStore>;

