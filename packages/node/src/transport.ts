/**
 * HTTP to Lookout: keep-alive (Node's fetch pools connections), retries with
 * exponential backoff and jitter on network errors, 5xx and 429
 * (honouring `Retry-After`), never on another 4xx. Background sends (events,
 * sessions) go through a bounded queue, one at a time in order: when it is
 * full a send is dropped and counted, never blocking the caller.
 */
import { errorFromAnswer, LookoutError } from './errors.js';

export interface TransportOptions {
  baseUrl: string;
  /** most retries of one request (default 6) */
  maxRetries?: number;
  /** first backoff (default 500 ms), doubled each retry up to `maxBackoffMs` (default 30 s) */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** most background sends waiting (default 1,000) */
  queueSize?: number;
  userAgent: string;
}

export interface TransportStats {
  queued: number;
  sent: number;
  dropped: number;
  failed: number;
  retries: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `Retry-After` in seconds or as an HTTP date → milliseconds, or null. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (!header) return null;
  if (/^\d+(\.\d+)?$/.test(header.trim())) return Number(header) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export function makeTransport(opts: TransportOptions) {
  const maxRetries = opts.maxRetries ?? 6;
  const backoff = opts.backoffMs ?? 500;
  const maxBackoff = opts.maxBackoffMs ?? 30_000;
  const queueSize = opts.queueSize ?? 1000;
  const stats: Omit<TransportStats, 'queued'> = { sent: 0, dropped: 0, failed: 0, retries: 0 };
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');

  /** One request, retried while retrying can help; resolves with the parsed answer or throws a LookoutError. */
  async function request<T>(method: string, path: string, body: unknown, headers: Record<string, string>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let wait: number;
      try {
        const res = await fetch(`${baseUrl}${path}`, {
          method,
          headers: { 'user-agent': opts.userAgent, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        const parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        if (res.ok) return parsed as T;
        const error = errorFromAnswer(res.status, parsed);
        if (res.status !== 429 && res.status < 500) throw error;
        if (attempt >= maxRetries) throw error;
        wait = retryAfterMs(res.headers.get('retry-after')) ?? jittered(attempt);
      } catch (err) {
        if (err instanceof LookoutError) throw err;
        // No answer (refused, reset, DNS) or an unreadable one: retry.
        if (attempt >= maxRetries) throw new LookoutError(0, 'network_error', (err as Error).message);
        wait = jittered(attempt);
      }
      stats.retries++;
      await sleep(wait);
    }
  }

  /** "Equal jitter": half the doubled backoff, plus up to as much again at random; six retries span at least 15 s. */
  function jittered(attempt: number): number {
    const cap = Math.min(maxBackoff, backoff * 2 ** attempt);
    return cap / 2 + (Math.random() * cap) / 2;
  }

  const pending = new Set<Promise<void>>();
  let waiting: (() => Promise<unknown>)[] = [];
  let running = 0;
  // One at a time, in the order given: Lookout reads a group's sign-in attempts in time order, and a late
  // attempt older than a burst already raised would start a second issue (docs/decisions.md).
  const CONCURRENCY = 1;

  function pump(): void {
    while (running < CONCURRENCY && waiting.length > 0) {
      const send = waiting.shift()!;
      running++;
      const done = send()
        .then(() => void stats.sent++)
        .catch(() => void stats.failed++)
        .finally(() => {
          running--;
          pending.delete(done);
          pump();
        });
      pending.add(done);
    }
  }

  return {
    request,
    /** Sends in the background; false (and counted) when the queue is full. */
    enqueue(send: () => Promise<unknown>): boolean {
      if (waiting.length >= queueSize) {
        stats.dropped++;
        return false;
      }
      waiting.push(send);
      pump();
      return true;
    },
    /** Resolves when every queued send has been answered or given up. */
    async drain(): Promise<void> {
      while (waiting.length > 0 || pending.size > 0) await Promise.all([...pending]);
    },
    /** Gives up what is still waiting (close without flush). */
    clear(): void {
      stats.dropped += waiting.length;
      waiting = [];
    },
    stats: (): TransportStats => ({ ...stats, queued: waiting.length }),
  };
}
export type Transport = ReturnType<typeof makeTransport>;
