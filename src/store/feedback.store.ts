/**
 * User feedback (issue 46): what a person wrote about an error, from a Sentry
 * SDK's `feedback` item (`Sentry.captureFeedback`) or an older `user_report`.
 * One document each, `_id` `<project>:<feedback id>`; the issue it belongs to
 * is found through its event in Redis (`fb:<issue>`, src/state/issues.state.ts),
 * so a read of an issue's feedback is by `_id`.
 */
import type { Db, IndexDescription } from 'mongodb';
import type { Feedback } from '../domain/feedback.ts';
import { ensureIndexes, insertOnce } from './mongo.ts';

/** The feedback as read (src/domain/feedback.ts), with its ids and times. */
export interface FeedbackDoc extends Omit<Feedback, 'id' | 'at'> {
  /** `<project>:<feedback id>` */
  _id: string;
  project_id: number;
  /** the feedback's own id (32 hex) */
  feedback_id: string;
  at: Date;
  received_at: Date;
}

export const feedbackIndexes: IndexDescription[] = [{ key: { received_at: 1 }, name: 'retention' }];

export const feedbackKey = (project: number, id: string) => `${project}:${id}`;

export function makeFeedbackStore(db: Db) {
  const feedback = db.collection<FeedbackDoc>('feedback');
  return {
    collection: feedback,
    async ensureIndexes() {
      await ensureIndexes(feedback, feedbackIndexes);
    },
    /** Stores one, once: the same feedback sent again changes nothing. */
    insert: (doc: FeedbackDoc) => insertOnce(feedback, doc),
    /** The documents of these `_id`s, in their order; a missing one is left out. */
    async getMany(ids: string[]): Promise<FeedbackDoc[]> {
      if (ids.length === 0) return [];
      const found = new Map((await feedback.find({ _id: { $in: ids } }).toArray()).map((d) => [d._id, d]));
      return ids.flatMap((id) => (found.has(id) ? [found.get(id)!] : []));
    },
    /** Deletes the projects' feedback received before `before` (retention; feedback is written rarely, so a scan is small). */
    async deleteOlder(before: Date, projects: { in: number[] } | { notIn: number[] }): Promise<number> {
      const project = 'in' in projects ? { $in: projects.in } : { $nin: projects.notIn };
      return (await feedback.deleteMany({ received_at: { $lt: before }, project_id: project })).deletedCount;
    },
    /** A project's feedback, for a rebuild of its issue state (a scan, as the rebuild's reads of events are). */
    ofProject: (project: number) => feedback.find({ project_id: project }),
  };
}
export type FeedbackStore = ReturnType<typeof makeFeedbackStore>;
