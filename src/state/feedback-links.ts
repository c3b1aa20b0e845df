/**
 * User feedback linked to the issue of its event (link-feedback-1.lua), or waiting for an event not yet arrived; taken
 * off by retention and restored by a rebuild.
 */
import type { RedisClient } from '../redis/connect.ts';
import { answerOf, projectKeys, type ScriptCommands } from './scripts.ts';

/** User feedback to link to the issue of its event: the event's fingerprint when the event is stored. */
export interface FeedbackLink {
  feedback_id: string;
  event_id: string | null;
  fingerprint: string | null;
  at: Date;
}
/** How long feedback waits for an event that has not arrived: an SDK sends the event first, or within moments. */
const FEEDBACK_WAIT_MS = 7 * 24 * 3600_000;

export function makeFeedbackLinks(redis: RedisClient & ScriptCommands, opts: { prefix: string }) {
  const keys = (project: number) => projectKeys(opts.prefix, project);
  return {
    /**
     * Links user feedback to the issue of its event (link-feedback-1.lua), or leaves it waiting for the event:
     * the issue id, 'waiting', or 'unverified' (the state is rebuilt from MongoDB, feedback with it).
     */
    async linkFeedback(project: number, link: FeedbackLink): Promise<number | 'waiting' | 'unverified'> {
      const k = keys(project);
      const code = await redis.linkFeedback(
        k.epoch,
        k.base,
        link.fingerprint ?? '',
        link.event_id ?? '',
        link.feedback_id,
        link.at.getTime(),
        FEEDBACK_WAIT_MS,
      );
      return code > 0 ? code : answerOf(code, { 0: 'waiting' } as const);
    },
    /** Takes feedback retention deleted off its issue. */
    async forgetFeedback(project: number, issue: number, ids: string[]): Promise<void> {
      await redis.zrem(`${keys(project).base}fb:${issue}`, ...ids);
    },
    /** A rebuild's links of feedback to issues, and of feedback still waiting for its event (see linkFeedback). */
    async replaceFeedback(project: number, links: { issue: number | null; event_id: string | null; feedback_id: string; at: Date }[]): Promise<void> {
      const base = keys(project).base;
      const pipe = redis.pipeline();
      for (const l of links) {
        if (l.issue !== null) pipe.zadd(`${base}fb:${l.issue}`, l.at.getTime(), l.feedback_id);
        else if (l.event_id) pipe.sadd(`${base}fbw:${l.event_id}`, `${l.at.getTime()}:${l.feedback_id}`).pexpire(`${base}fbw:${l.event_id}`, FEEDBACK_WAIT_MS);
      }
      await pipe.exec();
    },
  };
}
