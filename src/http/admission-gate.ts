/**
 * Admission's first word (issues 51, 66): a request to an ingest route that this process cannot absorb now (a full
 * buffer, a standing queue, the job queues' depth, Redis near `maxmemory`, the data folder's disk under its floor:
 * src/domain/admission.ts) is answered here, from the server's request handler, before Koa sees it and before its
 * body is read. A request taken is in flight, for its sender, until it is answered. In a storm most requests are
 * such refusals, so one must cost the thread next to nothing: a ready answer, no context, no request id, no log
 * line. Each is counted by route and reason in `/metrics` and, when its key names a project, in that project's
 * ingestion, a second at a time.
 *
 * What is decided per project (its quotas, spike protection) needs the project; it is the admission middleware's
 * (src/http/middleware/admission.middleware.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import querystring from 'node:querystring';
import { sentryRateLimits, type AdmissionReason, type Verdict } from '../domain/admission.ts';
import type { QuotaCategory } from '../domain/quotas.ts';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics/metrics.ts';
import type { KeyResolver } from './key-resolver.ts';
import type { LoadSampler } from './admission-load.ts';
import type { IngestStats } from '../state/ingest-stats.ts';
import { sentryKey, serviceKey, type KeyCarrier } from './middleware/auth.middleware.ts';
import { CORS_ANSWER_HEADERS } from './middleware/cors.middleware.ts';

/** An ingest route as admission sees it: what it counts as, what it carries (when the path says), its key. */
export interface IngestRoute {
  name: 'events' | 'sessions' | 'envelope' | 'store' | 'security';
  /** the item type its refusals are counted as in the project's ingestion */
  type: string;
  /** the quota its requests count against, when the route alone says */
  category: QuotaCategory | null;
  sentry: boolean;
  /** browsers post to it (its answers carry CORS headers) */
  cors: boolean;
}

const SENTRY_PATH = /^\/api\/(?:\d+\/)?(envelope|store|security)\/?$/;

export function ingestRoute(method: string | undefined, path: string): IngestRoute | null {
  if (method !== 'POST') return null;
  if (path === '/api/v1/events') return { name: 'events', type: 'event', category: null, sentry: false, cors: false };
  if (path === '/api/v1/sessions') return { name: 'sessions', type: 'session', category: 'session', sentry: false, cors: true };
  const sentry = SENTRY_PATH.exec(path);
  if (!sentry) return null;
  const name = sentry[1] as 'envelope' | 'store' | 'security';
  return { name, type: name === 'envelope' ? 'envelope' : name === 'store' ? 'event' : 'security', category: name === 'envelope' ? null : 'error', sentry: true, cors: true };
}

/** A request line's path: origin-form (`/api/...?...`) as nearly every client sends it, or absolute-form. */
export function pathOf(url: string): string {
  if (!url.startsWith('/')) {
    try {
      return new URL(url).pathname;
    } catch {
      return url;
    }
  }
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** The key a request to an ingest route carries, read as the route's authentication reads it. */
export function ingestKey(route: IngestRoute, from: KeyCarrier): string | undefined {
  return route.sentry ? sentryKey(from) : serviceKey(from);
}

/**
 * Who an ingest request is from, as admission tells senders apart: its project once this process knows the key's, or
 * the key itself (a flood of made-up keys is not one project's share).
 */
export function senderOf(project: number | undefined, key: string | undefined): string | number {
  return project ?? key ?? '';
}

/** A raw request as a key carrier: its headers, and its query string parsed only when a key is looked for there. */
function carrierOf(req: IncomingMessage): KeyCarrier {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  return {
    get: (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(', ') : (value ?? '');
    },
    get query() {
      return q < 0 ? {} : querystring.parse(url.slice(q + 1));
    },
  };
}

const REFUSAL_WORDS: Record<AdmissionReason, string> = {
  ingest_backlog: 'Lookout holds as much as it buffers; retry shortly',
  ingest_slow: 'the store has not taken a write for a while; retry shortly',
  queue_delay: 'Lookout is taking in more than it can process and sheds the excess of the largest senders; retry shortly',
  queue_depth: 'the processing queue is deep; retry shortly',
  redis_memory: 'Redis is near its maxmemory; nothing more is taken until memory is freed',
  disk_floor: "the data folder's disk is under its free-space floor; nothing more is taken until space is freed",
};

/** A refusal as it is sent: its body a string, so that Node writes it with its headers in one system call. */
interface Answer {
  status: number;
  headers: Record<string, string | number>;
  body: string;
}

const COUNT_MS = 1000;
const LOOKUPS = 20;

export function makeAdmissionGate(deps: { load: LoadSampler; resolver: KeyResolver; stats: IngestStats; metrics: Metrics; log: Logger }) {
  /** the few answers there are, made once each */
  const answers = new Map<string, Answer>();
  function answerFor(route: IngestRoute, verdict: Verdict & { admit: false }): Answer {
    // 503 on the native events endpoint: it carries sign-in attempts, which the installation's SDK retries
    const status = route.name === 'events' ? 503 : verdict.status;
    const id = `${status} ${verdict.reason} ${verdict.retryAfter} ${route.sentry} ${route.cors}`;
    let answer = answers.get(id);
    if (!answer) {
      const body = JSON.stringify({ reason: verdict.reason, message: REFUSAL_WORDS[verdict.reason], retry_after: verdict.retryAfter });
      const headers: Answer['headers'] = { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Retry-After': String(verdict.retryAfter) };
      if (route.sentry) headers['X-Sentry-Rate-Limits'] = sentryRateLimits(verdict.retryAfter, verdict.reason);
      if (route.cors) Object.assign(headers, CORS_ANSWER_HEADERS);
      answers.set(id, (answer = { status, headers, body }));
    }
    return answer;
  }

  // Refusals are counted a second at a time: per route and reason for /metrics, per project for its ingestion. A
  // refusal is counted under its project when this process knows the key's; a key it does not know is kept (until
  // the count) and looked up then, at most LOOKUPS a second (a storm of made-up keys must not become a storm of
  // reads); past them, and for a key that names no project, /metrics alone counts.
  type Counted = { project: number | undefined; key: string | undefined; route: IngestRoute; reason: AdmissionReason; n: number };
  let refused = new Map<string, Counted>();
  const timer = setInterval(() => void count().catch((err) => deps.log.warn({ err }, 'counting refusals failed')), COUNT_MS);
  timer.unref();
  async function count(): Promise<void> {
    if (refused.size === 0) return;
    const taken = refused;
    refused = new Map();
    const byReason: Record<string, number> = {};
    let lookups = 0;
    for (const { project, key, route, reason, n } of taken.values()) {
      deps.metrics.refused.inc({ route: route.name, reason }, n);
      byReason[reason] = (byReason[reason] ?? 0) + n;
      const known = project ?? (key && lookups++ < LOOKUPS ? (await deps.resolver.resolve(key).catch(() => null))?.project._id : undefined);
      if (known !== undefined) deps.stats.record(known, 'dropped', route.type, reason, n);
    }
    deps.log.info({ refused: byReason }, 'ingest requests refused for load');
  }

  return {
    /** Answers the request itself when it is an ingest request this process cannot take now; true when it did. */
    refused(req: IncomingMessage, res: ServerResponse): boolean {
      const route = ingestRoute(req.method, pathOf(req.url ?? ''));
      if (!route) return false;
      const key = ingestKey(route, carrierOf(req));
      // shared fairly among projects: a project's keys are one sender once this process has resolved them
      const project = key === undefined ? undefined : deps.resolver.cached(key)?.project._id;
      const sender = senderOf(project, key);
      const verdict = deps.load.verdict(sender);
      if (verdict.admit) {
        res.once('close', () => deps.load.answered(sender));
        return false;
      }
      const answer = answerFor(route, verdict);
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
      const unknownKey = project === undefined ? key : undefined;
      const id = `${project ?? ''} ${unknownKey ?? ''} ${route.name} ${verdict.reason}`;
      const seen = refused.get(id);
      if (seen) seen.n += 1;
      else refused.set(id, { project, key: unknownKey, route, reason: verdict.reason, n: 1 });
      return true;
    },
    /** Counts what is left to count (at shutdown). */
    async close(): Promise<void> {
      clearInterval(timer);
      await count();
    },
  };
}
export type AdmissionGate = ReturnType<typeof makeAdmissionGate>;
