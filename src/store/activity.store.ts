/**
 * An issue's activity (issue 50): status changes and who made them, assignments, comments, regressions, ignores
 * that ended and notifications sent. One document each, read by `_id` only (FerretDB answers no query by another
 * field from an index):
 * - what a person or a notification did: `<project>:<issue>:<n>`, n from the issue's counter (`activity:<project>:<issue>`),
 *   so its newest are the ids below the counter's value;
 * - a regression: `<project>:<issue>:r<n>`, its number among the issue's regressions, written by the worker that
 *   applied it, again by a retry with the same result.
 */
import type { Db } from 'mongodb';
import type { IssueChange } from '../state/issue-changes.ts';
import { insertNumbered } from './counters.store.ts';

export type ActivityKind = 'status' | 'assigned' | 'comment' | 'regressed' | 'unignored' | 'notified';

export interface ActivityDoc {
  _id: string;
  project_id: number;
  issue: number;
  at: Date;
  kind: ActivityKind;
  /** the member's email; null for Lookout itself, `key` for an installation's secret key */
  by: string | null;
  /** what changed: a status and how (`in_next_release`, `until_count`, `until`), an assignee, a comment's text, a release, a channel */
  data: Record<string, unknown>;
}

export type NewActivity = Omit<ActivityDoc, '_id' | 'project_id' | 'issue'>;

/** How many of an issue's newest entries of each sort a read returns. */
const READ_NEWEST = 100;
const READ_REGRESSIONS = 20;

const counterOf = (project: number, issue: number) => `activity:${project}:${issue}`;

export function makeActivityStore(db: Db) {
  const activity = db.collection<ActivityDoc>('activity');
  const counters = db.collection<{ _id: string; seq: number }>('counters');
  return {
    /** Adds an entry under the issue's next number (a number two writers both took is taken again). */
    add(project: number, issue: number, entry: NewActivity): Promise<ActivityDoc> {
      return insertNumbered(db, counterOf(project, issue), 'activity', (n): ActivityDoc => ({ _id: `${project}:${issue}:${n}`, project_id: project, issue, ...entry }));
    },
    /** Records the issue's regression number `n` once, however often it is written. */
    async regressed(project: number, issue: number, n: number, entry: NewActivity): Promise<void> {
      const doc: ActivityDoc = { _id: `${project}:${issue}:r${n}`, project_id: project, issue, ...entry };
      await activity.updateOne({ _id: doc._id }, { $setOnInsert: doc }, { upsert: true });
    },
    /**
     * What applying occurrences did to issues' statuses (src/state/issue-changes.ts): a regression is written under
     * its number, so a retry writes it once; an ignore that ended is lost from the activity if the worker dies right
     * after applying it.
     */
    async changes(project: number, changes: IssueChange[]): Promise<void> {
      for (const c of changes) {
        if (c.what === 'regressed') {
          await this.regressed(project, c.issue, c.n, { at: c.at, kind: 'regressed', by: null, data: { release: c.release, regression_kind: c.regression_kind } });
        } else {
          await this.add(project, c.issue, { at: c.at, kind: 'unignored', by: null, data: { release: c.release, event_count: c.n } });
        }
      }
    },
    /** The issue's newest entries, newest first: its last 100, and its last 20 regressions (`regressions`: how many it had). */
    async ofIssue(project: number, issue: number, regressions: number): Promise<ActivityDoc[]> {
      const counter = await counters.findOne({ _id: counterOf(project, issue) });
      const last = counter?.seq ?? 0;
      const ids = [
        ...Array.from({ length: Math.min(last, READ_NEWEST) }, (_, i) => `${project}:${issue}:${last - i}`),
        ...Array.from({ length: Math.min(regressions, READ_REGRESSIONS) }, (_, i) => `${project}:${issue}:r${regressions - i}`),
      ];
      if (ids.length === 0) return [];
      const docs = await activity.find({ _id: { $in: ids } }).toArray();
      return docs.sort((a, b) => b.at.getTime() - a.at.getTime() || b._id.localeCompare(a._id));
    },
  };
}
export type ActivityStore = ReturnType<typeof makeActivityStore>;
