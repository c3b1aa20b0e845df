/**
 * The traces and logs reads (issue 69), mounted for both ways in as project-reads.ts' are: the key API
 * (`/api/v1/performance`, `/api/v1/traces/{trace}`, `/api/v1/logs`…) and the dashboard (`/projects/{project}/…`).
 * They translate the query into a window and hand it to the performance service.
 */
import type Router from '@koa/router';
import { NotFoundError } from '../../errors.ts';
import { contracted } from '../contract.ts';
import type { AppDeps } from '../deps.ts';
import { textParam } from '../params.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../store/traces.store.ts';
import { wayContract, type WayIn } from './project-reads.ts';

const RANGE_MS: Record<string, number> = { '15m': 15 * MINUTE_MS, '1h': HOUR_MS, '24h': DAY_MS, '7d': 7 * DAY_MS, '14d': 14 * DAY_MS, '30d': 30 * DAY_MS, '90d': 90 * DAY_MS };

const GROUP = textParam('group', "the transaction group's key (from the Performance list)", { type: 'string', pattern: '^[A-Za-z0-9_-]{12}$' });
const TRACE = textParam('trace', 'the trace id (32 hex digits)', { type: 'string', pattern: '^[0-9a-fA-F]{32}$' });

/**
 * The window a range names, ending now. A window of a day or more starts at the top of its first hour, so it reads
 * whole hours (and days) rather than the minutes of its first hour: the figures of a month do not need its first
 * minute, and its read stays a few dozen documents.
 */
function windowOf(range: string, now: number) {
  const length = RANGE_MS[range]!;
  const from = length >= DAY_MS ? Math.floor((now - length) / HOUR_MS) * HOUR_MS : now - length;
  return { w: { from, to: now + 1 }, range, since: new Date(from).toISOString(), until: new Date(now).toISOString() };
}

export function mountPerformanceReads<S extends object>(router: Router<S>, deps: AppDeps, base: string, way: WayIn): void {
  const routes = contracted(router, deps);
  const contract = wayContract(way, 'performance');
  const { performance } = deps;

  routes.get(
    `${base}/performance`,
    contract({
      summary: "The project's transaction groups over a window: throughput, p50/p75/p95/p99, failure rate, Apdex, web vitals and a sparkline, busiest first; and all of them together",
      query: 'performance-query',
      ok: { 200: { description: 'the groups', schema: 'performance-list' } },
      errors: [400],
    }),
    async (ctx, { query }) => {
      const { w, ...window } = windowOf(query.range, Date.now());
      const { groups, total } = await performance.list(await way.projectOf(ctx), w, query);
      ctx.body = { ...window, apdex_threshold_ms: deps.config.traces.apdexMs, total, groups };
    },
  );
  routes.get(
    `${base}/performance/:group`,
    contract({
      summary: "One transaction group over a window: percentiles over time, its latency histogram, where its time goes, N+1 queries and its slowest samples",
      params: [GROUP],
      query: 'performance-query',
      ok: { 200: { description: 'the group', schema: 'performance-group' } },
      errors: [400, 404],
    }),
    async (ctx, { params, query }) => {
      const { w, ...window } = windowOf(query.range, Date.now());
      const group = await performance.group(await way.projectOf(ctx), params.group, w, query);
      if (!group) throw new NotFoundError('group_not_found', 'no transactions of this group in the window');
      ctx.body = { ...window, ...group };
    },
  );
  routes.get(
    `${base}/vitals`,
    contract({
      summary: 'Web vitals per page over a window: p75 of LCP, INP, CLS, FCP and TTFB, and the shares good, needing improvement and poor',
      query: 'performance-query',
      ok: { 200: { description: 'the pages', schema: 'vitals-list' } },
      errors: [400],
    }),
    async (ctx, { query }) => {
      const { w, ...window } = windowOf(query.range, Date.now());
      ctx.body = { ...window, pages: await performance.vitals(await way.projectOf(ctx), w, query) };
    },
  );
  routes.get(
    `${base}/traces/:trace`,
    contract({
      summary: 'A trace: its sampled transactions with their spans, and the error events and log lines that named it',
      params: [TRACE],
      query: 'trace-query',
      ok: { 200: { description: 'the trace (`sampled: false` when only errors or lines of it were kept)', schema: 'trace' } },
      errors: [400],
    }),
    async (ctx, { params, query }) => {
      ctx.body = await performance.trace(await way.projectOf(ctx), params.trace.toLowerCase(), query.at === undefined ? undefined : Date.parse(query.at));
    },
  );
  routes.get(
    `${base}/logs`,
    contract({
      summary: 'Log lines of a window, newest first: by level, text, attribute and trace',
      query: 'logs-query',
      ok: { 200: { description: 'the lines', schema: 'log-list' } },
      errors: [400],
    }),
    async (ctx, { query }) => {
      const { w, since, until } = windowOf(query.range, Date.now());
      if (query.since !== undefined) w.from = Math.max(w.from, Date.parse(query.since) + 1);
      const eq = query.attribute?.indexOf('=') ?? -1;
      const found = await performance.logs(await way.projectOf(ctx), w, {
        levels: query.level?.split(','),
        text: query.q,
        attribute: query.attribute && eq > 0 ? { key: query.attribute.slice(0, eq), value: query.attribute.slice(eq + 1) } : undefined,
        trace: query.trace,
        limit: query.limit,
      });
      ctx.body = { since, until, ...found };
    },
  );
}
