/**
 * The Redis side of notifications, all under the project's hash tag:
 *   nq                 the outbox: triggers recorded by the scripts that made them (apply-events-4.lua,
 *                      apply-burst-3.lua, raise-notice-2.lua), a stream of {t: JSON}
 *   nqc                the id of the last outbox entry dispatched
 *   nr:<channel>:<s>   a frequency or crash-free rule's mark for a subject (raise-notice-2.lua)
 *   ns:, nb:, np:<channel>, nx:<delivery>, ndg:<digest>   noise control (route-notice-4.lua, take-digest-4.lua)
 *   nd:<delivery>      a delivery's log entry (hash), nda:<delivery> its attempts (list), kept a week
 *   nl                 the project's deliveries by creation (zset), the newest 1,000 kept
 *   nf:<channel>       failed deliveries in a row
 * and one global set, the projects whose outbox may hold undispatched triggers.
 */
import type { RedisClient } from '../redis/connect.ts';
import type { TriggerRecord } from '../domain/notifications.ts';
import { defineScripts, projectKeys } from '../state/scripts.ts';
import type { Delivery } from '../generated/schema-types.ts';

const WEEK_MS = 7 * 86_400_000;
/** Deliveries a project's log keeps. */
const DELIVERIES_KEPT = 1000;

/** A delivery as the log keeps it (schemas/answers/delivery.json, without its attempts). */
export type DeliveryLog = Omit<Delivery, 'attempts_log'>;
export type DeliveryStatus = Delivery['status'];

export interface Attempt {
  at: string;
  status: number | null;
  error: string | null;
  /** the first 1 KB of the answer */
  answer: string;
}

export function makeNotifyState(redis: RedisClient, opts: { prefix: string }) {
  const r = defineScripts(redis);
  const projects = `${opts.prefix}:notify:projects`;
  const base = (project: number) => projectKeys(opts.prefix, project).base;
  const outbox = (project: number) => `${base(project)}nq`;

  return {
    /** The project's outbox may hold triggers: the dispatcher visits it on its next tick. */
    markProject: (project: number) => redis.sadd(projects, String(project)),
    async takeProjects(): Promise<number[]> {
      const ids = await redis.smembers(projects);
      if (ids.length > 0) await redis.srem(projects, ...ids);
      return ids.map(Number);
    },

    /** Triggers after the last one dispatched, oldest first. */
    async pending(project: number, count: number): Promise<{ id: string; trigger: TriggerRecord }[]> {
      const after = (await redis.get(`${base(project)}nqc`)) ?? '0-0';
      const entries = await redis.xrange(outbox(project), `(${after}`, '+', 'COUNT', count);
      return entries.map(([id, fields]) => ({ id, trigger: JSON.parse(fields[1]!) as TriggerRecord }));
    },
    /** Marks the outbox dispatched up to `id` and lets go of what came before. */
    async dispatched(project: number, id: string): Promise<void> {
      await redis.set(`${base(project)}nqc`, id);
      await redis.xtrim(outbox(project), 'MINID', id);
    },

    /** Records a channel rule's trigger unless its mark for the subject holds; true when recorded. */
    async raise(project: number, channel: number, subject: string, holdMs: number, trigger: TriggerRecord): Promise<boolean> {
      return (await r.raiseNotice(`${base(project)}nr:${channel}:${subject}`, outbox(project), holdMs, JSON.stringify(trigger))) === 1;
    },
    /** Lifts a rule's mark, so the rule can fire again (a crash-free rate that recovered). */
    async rearm(project: number, channel: number, subject: string): Promise<void> {
      await redis.del(`${base(project)}nr:${channel}:${subject}`);
    },

    /** Noise control: send a delivery alone, or add it to the channel's digest (route-notice-4.lua). */
    async route(
      project: number,
      channel: number,
      delivery: string,
      body: string,
      now: Date,
      limits: { perWindow: number; windowMs: number; digestItems: number },
    ): Promise<{ send: true } | { send: false; digest: string; due: Date }> {
      const b = base(project);
      const [decision, id, due] = await r.routeNotice(
        `${b}ns:${channel}`,
        `${b}nb:${channel}`,
        `${b}np:${channel}`,
        `${b}nx:${delivery}`,
        now.getTime(),
        limits.perWindow,
        limits.windowMs,
        limits.digestItems,
        delivery,
        body,
        `n${project}-d${channel}-${now.getTime()}`,
      );
      return decision === 'send' ? { send: true } : { send: false, digest: id!, due: new Date(Number(due)) };
    },
    /** Closes a due digest and answers its bodies and count (take-digest-4.lua); null when it was lost. */
    async takeDigest(project: number, channel: number, digest: string, now: Date, windowMs: number): Promise<{ count: number; bodies: string[] } | null> {
      const b = base(project);
      const [count, ...bodies] = await r.takeDigest(
        `${b}ns:${channel}`,
        `${b}nb:${channel}`,
        `${b}np:${channel}`,
        `${b}ndg:${digest}`,
        digest,
        now.getTime(),
        windowMs,
      );
      return count === undefined ? null : { count: Number(count), bodies };
    },

    /** Opens a delivery's log entry; opening it again changes nothing. */
    async openDelivery(project: number, d: { id: string; channel: number; event: string; status: DeliveryStatus; digest?: string; issue?: number }, now: Date): Promise<void> {
      const b = base(project);
      const key = `${b}nd:${d.id}`;
      const pipe = redis.pipeline();
      const fields: Record<string, string> = {
        channel: String(d.channel),
        event: d.event,
        status: d.status,
        attempts: '0',
        created_at: now.toISOString(),
        ...(d.digest ? { digest: d.digest } : {}),
        ...(d.issue !== undefined ? { issue: String(d.issue) } : {}),
      };
      for (const [field, value] of Object.entries(fields)) pipe.hsetnx(key, field, value);
      pipe.pexpire(key, WEEK_MS);
      pipe.zadd(`${b}nl`, 'NX', now.getTime(), d.id);
      pipe.zremrangebyrank(`${b}nl`, 0, -DELIVERIES_KEPT - 1);
      await pipe.exec();
    },
    /** Records one attempt and the delivery's status after it. */
    async recordAttempt(project: number, delivery: string, attempt: Attempt, status: DeliveryStatus, nextAt: Date | null = null): Promise<void> {
      const b = base(project);
      const pipe = redis.pipeline();
      pipe.hincrby(`${b}nd:${delivery}`, 'attempts', 1);
      pipe.hset(`${b}nd:${delivery}`, {
        status,
        last_status: attempt.status === null ? '' : String(attempt.status),
        last_error: attempt.error ?? '',
        next_attempt_at: nextAt?.toISOString() ?? '',
        ...(status === 'delivered' ? { delivered_at: attempt.at } : {}),
      });
      pipe.rpush(`${b}nda:${delivery}`, JSON.stringify(attempt));
      pipe.ltrim(`${b}nda:${delivery}`, -20, -1);
      pipe.pexpire(`${b}nda:${delivery}`, WEEK_MS);
      await pipe.exec();
    },
    async setStatus(project: number, delivery: string, status: DeliveryStatus): Promise<void> {
      await redis.hset(`${base(project)}nd:${delivery}`, 'status', status);
    },
    /** The newest deliveries first, with their attempts (all the log keeps are read only to pick one channel's). */
    async deliveries(project: number, limit: number, channel?: number): Promise<(DeliveryLog & { attempts_log: Attempt[] })[]> {
      const b = base(project);
      const ids = await redis.zrevrange(`${b}nl`, 0, (channel === undefined ? limit : DELIVERIES_KEPT) - 1);
      const pipe = redis.pipeline();
      for (const id of ids) pipe.hgetall(`${b}nd:${id}`).lrange(`${b}nda:${id}`, 0, -1);
      const answers = (await pipe.exec()) ?? [];
      const out: (DeliveryLog & { attempts_log: Attempt[] })[] = [];
      for (const [i, id] of ids.entries()) {
        const h = answers[2 * i]![1] as Record<string, string>;
        if (!h.channel || (channel !== undefined && h.channel !== String(channel))) continue;
        out.push({
          id,
          channel: h.channel,
          event: h.event!,
          status: h.status as DeliveryStatus,
          attempts: Number(h.attempts ?? 0),
          last_status: h.last_status ? Number(h.last_status) : null,
          last_error: h.last_error || null,
          created_at: h.created_at!,
          delivered_at: h.delivered_at ?? null,
          ...(h.digest ? { digest: h.digest } : {}),
          ...(h.issue ? { issue: h.issue } : {}),
          ...(h.next_attempt_at && h.status === 'retrying' ? { next_attempt_at: h.next_attempt_at } : {}),
          attempts_log: (answers[2 * i + 1]![1] as string[]).map((a) => JSON.parse(a) as Attempt),
        });
        if (out.length >= limit) break;
      }
      return out;
    },

    /** Failed deliveries in a row of a channel: one more, answering the count; or none after a success. */
    failedInARow: (project: number, channel: number) => redis.incr(`${base(project)}nf:${channel}`),
    /** Each channel's failed deliveries in a row (0 after a success). */
    async failures(project: number, channels: number[]): Promise<number[]> {
      if (channels.length === 0) return [];
      return (await redis.mget(...channels.map((c) => `${base(project)}nf:${c}`))).map((n) => Number(n ?? 0));
    },
    succeeded: (project: number, channel: number) => redis.del(`${base(project)}nf:${channel}`),

    /** Each issue's events per minute of receipt in the last hour (apply-events-4.lua's im:). */
    async minuteCounts(project: number, issues: number[]): Promise<Map<number, Map<number, number>>> {
      const pipe = redis.pipeline();
      for (const id of issues) pipe.hgetall(`${base(project)}im:${id}`);
      const answers = (await pipe.exec()) ?? [];
      return new Map(issues.map((id, i) => [id, new Map(Object.entries(answers[i]![1] as Record<string, string>).map(([m, n]) => [Number(m), Number(n)]))]));
    },
  };
}
export type NotifyState = ReturnType<typeof makeNotifyState>;
