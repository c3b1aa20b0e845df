/**
 * User feedback as Sentry's SDKs send it (issue 46), read into one shape: a
 * `feedback` item (`Sentry.captureFeedback`, SDKs of 2024 on) is an event
 * whose `contexts.feedback` holds the message, the contact and the event it
 * is about; an older `user_report` item is `{event_id, name, email,
 * comments}`. Texts are cut to their limits and card numbers scrubbed, as in
 * events; null when nothing was written.
 */
import { cutText } from './client-keys.ts';
import { isObj, type Obj } from './obj.ts';
import { readTimestamp } from './event-repairs.ts';
import { scrubCards } from './scrub.ts';

export const FEEDBACK_LIMITS = { comments: 4096, name: 128, email: 254, url: 2048 } as const;

export interface Feedback {
  /** the feedback's own id (32 hex), or null: one is given */
  id: string | null;
  /** the event it is about (32 hex), if it names one */
  event_id: string | null;
  /** `feedback` (captureFeedback) or `user_report` */
  source: 'feedback' | 'user_report';
  name: string | null;
  email: string | null;
  comments: string;
  /** the page it was sent from, if the SDK said */
  url: string | null;
  at: string | null;
}

const hexId = (v: unknown) => {
  const id = typeof v === 'string' ? v.toLowerCase().replace(/-/g, '') : '';
  return /^[0-9a-f]{32}$/.test(id) ? id : null;
};
const text = (v: unknown, max: number) => (typeof v === 'string' && v.trim() !== '' ? cutText(scrubCards(v.trim()), max) : null);

export function readFeedback(type: 'feedback' | 'user_report', payload: unknown): Feedback | null {
  if (!isObj(payload)) return null;
  if (type === 'user_report') {
    const comments = text(payload.comments, FEEDBACK_LIMITS.comments);
    if (comments === null) return null;
    return {
      id: null,
      event_id: hexId(payload.event_id),
      source: type,
      name: text(payload.name, FEEDBACK_LIMITS.name),
      email: text(payload.email, FEEDBACK_LIMITS.email),
      comments,
      url: null,
      at: null,
    };
  }
  const context = isObj(payload.contexts) && isObj((payload.contexts as Obj).feedback) ? ((payload.contexts as Obj).feedback as Obj) : {};
  const comments = text(context.message, FEEDBACK_LIMITS.comments);
  if (comments === null) return null;
  return {
    id: hexId(payload.event_id),
    event_id: hexId(context.associated_event_id),
    source: type,
    name: text(context.name, FEEDBACK_LIMITS.name),
    email: text(context.contact_email, FEEDBACK_LIMITS.email),
    comments,
    // the page: the feedback's own url, else the event's request (the browser SDK sends it there)
    url: text(context.url, FEEDBACK_LIMITS.url) ?? text(isObj(payload.request) ? (payload.request as Obj).url : null, FEEDBACK_LIMITS.url),
    at: readTimestamp(payload.timestamp),
  };
}
