/**
 * Tells every API process that a project's keys, binding, flags or alerts
 * changed (Redis pub/sub), so each drops its cached key lookups at once
 * instead of after KEY_CACHE_SECONDS. The change is published before the
 * admin command or request that made it answers. A subscriber that loses its
 * connection forgets everything when it is back, since it may have missed a
 * message; while Redis is away the cache's own expiry bounds staleness.
 */
import { connectRedis, type RedisClient, type RedisTarget } from '../redis/connect.ts';
import type { Logger } from '../log.ts';

export function makeProjectChanges(deps: { redis: RedisClient; target: RedisTarget; prefix: string; log: Logger }) {
  const channel = `${deps.prefix}:project-changed`;
  return {
    async publish(project: number): Promise<void> {
      await deps.redis.publish(channel, String(project)).catch((err: Error) => {
        deps.log.warn({ err: err.message, project }, 'could not announce a project change; API processes see it when their key cache expires');
      });
    },

    /** Calls `onChange` with the project of each change (and with null after a reconnect); returns the unsubscribe. Never waits for Redis. */
    subscribe(onChange: (project: number | null) => void): () => void {
      const subscriber = connectRedis(deps.target, { maxRetriesPerRequest: null });
      subscriber.on('error', (err: Error) => deps.log.debug({ err: err.message }, 'project-change subscriber error; reconnecting'));
      let connectedBefore = false;
      subscriber.on('ready', () => {
        if (connectedBefore) onChange(null);
        connectedBefore = true;
      });
      subscriber.on('message', (_channel: string, project: string) => onChange(Number(project) || null));
      subscriber.subscribe(channel).catch((err: Error) => deps.log.warn({ err: err.message }, 'could not subscribe to project changes'));
      return () => subscriber.disconnect();
    },
  };
}
export type ProjectChanges = ReturnType<typeof makeProjectChanges>;
