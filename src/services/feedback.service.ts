/**
 * User feedback (issue 46): stored in MongoDB, then linked to the issue of
 * the event it is about (src/state/issues.state.ts' linkFeedback), or left
 * waiting for that event, which links it when it is counted. An issue's
 * feedback is read newest first, by `_id`.
 */
import crypto from 'node:crypto';
import type { Feedback } from '../domain/feedback.ts';
import type { IssuesState } from '../state/issues.state.ts';
import type { IssueReads } from '../state/issue-reads.ts';
import type { StateKeeper } from '../state/rebuild.ts';
import { eventKey, type EventsStore } from '../store/events.store.ts';
import { feedbackKey, type FeedbackDoc, type FeedbackStore } from '../store/feedback.store.ts';

export function feedbackView(doc: FeedbackDoc) {
  return {
    id: doc.feedback_id,
    event_id: doc.event_id,
    source: doc.source,
    name: doc.name,
    email: doc.email,
    comments: doc.comments,
    url: doc.url,
    at: doc.at.toISOString(),
  };
}

export function makeFeedbackService(deps: { feedback: FeedbackStore; events: EventsStore; state: IssuesState; reads: IssueReads; keeper: StateKeeper }) {
  return {
    /** Stores the feedback (durable before the answer), then links it to its event's issue. Returns its id. */
    async record(project: number, fb: Feedback, now: Date): Promise<string> {
      const id = fb.id ?? crypto.randomUUID().replace(/-/g, '');
      const at = fb.at ? new Date(fb.at) : now;
      const doc: FeedbackDoc = { _id: feedbackKey(project, id), project_id: project, feedback_id: id, event_id: fb.event_id, source: fb.source, name: fb.name, email: fb.email, comments: fb.comments, url: fb.url, at, received_at: now };
      await deps.feedback.insert(doc);
      const event = fb.event_id ? await deps.events.get(eventKey(project, fb.event_id)) : null;
      const link = { feedback_id: id, event_id: fb.event_id, fingerprint: event?.fingerprint ?? null, at };
      await deps.keeper.verified(project, now, () => deps.state.linkFeedback(project, link));
      return id;
    },

    /** A page of an issue's feedback, newest first; ids whose feedback retention deleted are dropped from the issue. */
    async ofIssue(project: number, issue: number, offset: number, limit: number) {
      const page = await deps.reads.feedback(project, issue, offset, limit);
      const docs = await deps.feedback.getMany(page.ids.map((id) => feedbackKey(project, id)));
      const gone = page.ids.filter((id) => !docs.some((d) => d.feedback_id === id));
      if (gone.length > 0) await deps.state.forgetFeedback(project, issue, gone);
      return { feedback: docs.map(feedbackView), total: page.total - gone.length, limit, offset };
    },
  };
}
export type FeedbackService = ReturnType<typeof makeFeedbackService>;
