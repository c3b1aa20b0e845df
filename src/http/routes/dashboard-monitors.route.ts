/**
 * The dashboard's Monitors page: a project's cron monitors (members see them; an owner makes, pauses and removes
 * them), and its bound installation as watched.
 */
import { readJson } from '../body.ts';
import { NotFoundError } from '../../errors.ts';
import { idParam, PARAMS, textParam } from '../params.ts';
import { ownerOnly } from './dashboard-account.route.ts';
import type { DashboardScope } from './dashboard-scope.ts';

const SLUG = textParam('slug', "the monitor's slug");
const WINDOW = idParam('window', 'maintenance window id', () => new NotFoundError('window_not_found', 'no such maintenance window in this project'));
const PROBE = idParam('probe', 'uptime probe id', () => new NotFoundError('probe_not_found', 'no such probe in this project'));

export function mountMonitorRoutes({ routes, deps, projectId }: DashboardScope): void {
  const { monitorsAdmin } = deps;
  routes.get(
    '/projects/:project/monitors',
    {
      tag: 'dashboard',
      summary: "The project's cron monitors: each environment's state and the next five expected runs",
      auth: 'dashboard',
      params: [PARAMS.project],
      ok: { 200: { description: 'the monitors, by slug', schema: 'monitor-list' } },
      errors: [404],
    },
    async (ctx) => {
      ctx.body = await monitorsAdmin.list(await projectId(ctx), new Date());
    },
  );
  routes.get(
    '/projects/:project/installation',
    {
      tag: 'dashboard',
      summary: 'The bound installation: what it reported at activation, its last config poll and request, and whether it is reported silent',
      auth: 'dashboard',
      params: [PARAMS.project],
      ok: { 200: { description: 'the installation (null while none is bound)', schema: 'installation-watch' } },
      errors: [404],
    },
    async (ctx) => {
      ctx.body = await deps.installations.view(await projectId(ctx));
    },
  );
  routes.get(
    '/projects/:project/monitors/:slug',
    {
      tag: 'dashboard',
      summary: 'A cron monitor with the newest runs of each environment',
      auth: 'dashboard',
      params: [PARAMS.project, SLUG],
      ok: { 200: { description: 'the monitor', schema: 'monitor' } },
      errors: [404],
    },
    async (ctx, { params }) => {
      ctx.body = await monitorsAdmin.show(await projectId(ctx), params.slug, new Date());
    },
  );
  routes.put(
    '/projects/:project/monitors',
    {
      tag: 'dashboard',
      summary: 'Make a cron monitor or change one (owner): what the body names is set, the rest kept',
      auth: 'dashboard',
      params: [PARAMS.project],
      body: { schema: 'monitor', checkedBy: 'MonitorsAdmin.set' },
      ok: { 200: { description: 'the monitor', schema: 'monitor' } },
      errors: [400, 404, 413, 415],
    },
    ownerOnly,
    async (ctx) => {
      const id = await projectId(ctx);
      ctx.body = await monitorsAdmin.set(id, await readJson(ctx, deps.config.bodyLimitBytes), new Date());
    },
  );
  for (const [verb, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    routes.post(
      `/projects/:project/monitors/:slug/${verb}`,
      {
        tag: 'dashboard',
        summary: paused ? 'Pause a monitor (owner): check-ins still recorded, nothing missed or raised' : 'Resume a paused monitor (owner): nothing is expected of it until its next check-in',
        auth: 'dashboard',
        params: [PARAMS.project, SLUG],
        ok: { 200: { description: 'the monitor', schema: 'monitor' } },
        errors: [404],
      },
      ownerOnly,
      async (ctx, { params }) => {
        ctx.body = await monitorsAdmin.setPaused(await projectId(ctx), params.slug, paused, new Date());
      },
    );
  }
  routes.delete(
    '/projects/:project/monitors/:slug',
    {
      tag: 'dashboard',
      summary: 'Remove a monitor and its runs (owner); its issue stays',
      auth: 'dashboard',
      params: [PARAMS.project, SLUG],
      ok: { 200: { description: 'what was removed', schema: 'removed' } },
      errors: [404],
    },
    ownerOnly,
    async (ctx, { params }) => {
      ctx.body = await monitorsAdmin.remove(await projectId(ctx), params.slug);
    },
  );

  mountProbeRoutes({ routes, deps, projectId });
  mountWindowRoutes({ routes, deps, projectId });
}

/** Maintenance windows: members see them; an owner adds and removes them. */
function mountWindowRoutes({ routes, deps, projectId }: Pick<DashboardScope, 'routes' | 'deps' | 'projectId'>): void {
  const { monitorsAdmin } = deps;
  routes.get(
    '/projects/:project/maintenance',
    { tag: 'dashboard', summary: "The project's maintenance windows", auth: 'dashboard', params: [PARAMS.project], ok: { 200: { description: 'the windows', schema: 'maintenance-windows' } }, errors: [404] },
    async (ctx) => {
      ctx.body = await monitorsAdmin.windows(await projectId(ctx));
    },
  );
  routes.post(
    '/projects/:project/maintenance',
    {
      tag: 'dashboard',
      summary: 'Add a maintenance window (owner): the monitors it covers raise nothing until it ends, then their true state',
      auth: 'dashboard',
      params: [PARAMS.project],
      body: { schema: 'maintenance-window', checkedBy: 'MonitorsAdmin.addWindow' },
      ok: { 201: { description: 'the window', schema: 'maintenance-window' } },
      errors: [400, 404, 413, 415],
    },
    ownerOnly,
    async (ctx) => {
      const id = await projectId(ctx);
      const added = await monitorsAdmin.addWindow(id, await readJson(ctx, deps.config.bodyLimitBytes), new Date());
      ctx.status = 201;
      ctx.body = added;
    },
  );
  routes.delete(
    '/projects/:project/maintenance/:window',
    {
      tag: 'dashboard',
      summary: 'Remove a maintenance window (owner): what it held is reported as the state stands',
      auth: 'dashboard',
      params: [PARAMS.project, WINDOW],
      ok: { 200: { description: 'what was removed', schema: 'removed' } },
      errors: [404],
    },
    ownerOnly,
    async (ctx, { params }) => {
      ctx.body = await monitorsAdmin.removeWindow(await projectId(ctx), params.window);
    },
  );
}

/** Uptime probes: members see them and their results; an owner adds and removes them. */
function mountProbeRoutes({ routes, deps, projectId }: Pick<DashboardScope, 'routes' | 'deps' | 'projectId'>): void {
  const { probes } = deps;
  routes.get(
    '/projects/:project/probes',
    {
      tag: 'dashboard',
      summary: "The project's uptime probes with each one's state",
      auth: 'dashboard',
      params: [PARAMS.project],
      ok: { 200: { description: 'the probes', schema: 'probe-list' } },
      errors: [404],
    },
    async (ctx) => {
      ctx.body = await probes.list(await projectId(ctx));
    },
  );
  routes.post(
    '/projects/:project/probes',
    {
      tag: 'dashboard',
      summary: 'Add an uptime probe (owner); its URL must lead to a public address unless PROBE_ALLOW_PRIVATE=true',
      auth: 'dashboard',
      params: [PARAMS.project],
      body: { schema: 'probe', checkedBy: 'ProbesService.add' },
      ok: { 201: { description: 'the probe, first checked within 10 seconds', schema: 'probe' } },
      errors: [400, 404, 413, 415, 422],
    },
    ownerOnly,
    async (ctx) => {
      const id = await projectId(ctx);
      const added = await probes.add(id, await readJson(ctx, deps.config.bodyLimitBytes), new Date());
      ctx.status = 201;
      ctx.body = added;
    },
  );
  routes.get(
    '/projects/:project/probes/:probe',
    {
      tag: 'dashboard',
      summary: 'An uptime probe with its uptime over 24 hours, 7 and 30 days and its newest checks (latency and reason)',
      auth: 'dashboard',
      params: [PARAMS.project, PROBE],
      ok: { 200: { description: 'the probe', schema: 'probe' } },
      errors: [404],
    },
    async (ctx, { params }) => {
      ctx.body = await probes.show(await projectId(ctx), params.probe, new Date());
    },
  );
  routes.delete(
    '/projects/:project/probes/:probe',
    {
      tag: 'dashboard',
      summary: 'Remove an uptime probe and its results (owner); its issues stay',
      auth: 'dashboard',
      params: [PARAMS.project, PROBE],
      ok: { 200: { description: 'what was removed', schema: 'removed' } },
      errors: [404],
    },
    ownerOnly,
    async (ctx, { params }) => {
      ctx.body = await probes.remove(await projectId(ctx), params.probe);
    },
  );
}
