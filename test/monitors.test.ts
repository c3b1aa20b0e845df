/**
 * Cron monitors' check-ins (issue 68) from the real @sentry/node SDK (`withMonitor`), sentry-cli (`monitors run`)
 * and curl-like requests to Sentry's `/cron/` endpoint: stored, applied by the worker to each monitor's state, a monitor made from the
 * check-in's configuration; bad input named, a monitor held to 6 check-ins a minute.
 */
import { expect, it } from 'vitest';
import { drained, makeProject, type TestContext } from './helpers/context.ts';
import { ensureNpm, runToExit, sentryCliBinary } from './helpers/real-clients.ts';
import { runSentryApp } from './helpers/sentry-app.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['events', 'sessions'], (c) => (ctx = c));

const get = async (path: string) => {
  const res = await fetch(`${ctx.api}${path}`);
  return { status: res.status, body: await res.json() };
};

it('withMonitor of @sentry/node 10: a job that succeeds makes its monitor from its config, one that throws fails', async () => {
  const p = await makeProject(ctx);
  const project = Number(p.project.id);
  const out = await runSentryApp(ctx, 'sentry-cron.mjs', { publicKey: p.publicKey, id: project });
  expect(out).toContain('"flushed":true');
  await drained(ctx);
  const monitor = await ctx.runtime.stores.checkins.monitor(project, 'nightly-backup');
  expect(monitor?.config).toEqual({ schedule: { type: 'crontab', value: '0 3 * * *' }, checkin_margin: 5, max_runtime: 10, timezone: 'Europe/Berlin', failure_issue_threshold: 1, recovery_threshold: 1 });
  const backup = await ctx.runtime.monitorsState.read({ project, slug: 'nightly-backup', environment: 'batch' });
  expect(backup).toMatchObject({ status: 'ok', open: [], failures_in_row: 0 });
  // the next run is 03:00 in Berlin, whichever day that is next
  expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' }).format(backup.next_checkin!)).toBe('03:00');
  const report = await ctx.runtime.monitorsState.read({ project, slug: 'nightly-report', environment: 'batch' });
  expect(report).toMatchObject({ status: 'error', failures_in_row: 1, next_checkin: null });
});

it('sentry-cli monitors run: a command exiting 0 checks in ok, one exiting 1 error, each run opened and closed', { timeout: 600_000 }, async () => {
  const cli = sentryCliBinary(ensureNpm('@sentry/cli', '@sentry/cli@3.8.0'));
  const p = await makeProject(ctx);
  const project = Number(p.project.id);
  const env = { ...process.env, SENTRY_DSN: `${ctx.api.replace('://', `://${p.publicKey}@`)}/${project}` };
  const ok = await runToExit(cli, ['monitors', 'run', 'db-vacuum', '--schedule', '* * * * *', '--', 'sh', '-c', 'sleep 1; exit 0'], { env });
  expect(ok.status, ok.stderr).toBe(0);
  const failed = await runToExit(cli, ['monitors', 'run', 'db-export', '--schedule', '0 * * * *', '--', 'sh', '-c', 'exit 1'], { env });
  expect(failed.status, failed.stderr).toBe(1);
  await drained(ctx);
  expect((await ctx.runtime.stores.checkins.monitor(project, 'db-vacuum'))?.config.schedule).toEqual({ type: 'crontab', value: '* * * * *' });
  expect(await ctx.runtime.monitorsState.read({ project, slug: 'db-vacuum', environment: 'production' })).toMatchObject({ status: 'ok', open: [] });
  expect(await ctx.runtime.monitorsState.read({ project, slug: 'db-export', environment: 'production' })).toMatchObject({ status: 'error', open: [], failures_in_row: 1 });
  const [run] = await ctx.runtime.stores.checkins.history(project, 'db-vacuum', 'production', 10);
  // one run: its in_progress and its ok under one id, with the duration sentry-cli measured
  expect(run).toMatchObject({ status: 'ok', duration_ms: expect.any(Number) });
  expect(run!.duration_ms!).toBeGreaterThanOrEqual(900);
  expect(await ctx.runtime.stores.checkins.history(project, 'db-vacuum', 'production', 10)).toHaveLength(1);
});

it('the /cron/ endpoint: a curl in a crontab checks in by the query, the key in the path or as a DSN’s', async () => {
  const p = await makeProject(ctx);
  const project = Number(p.project.id);
  const curl = await runToExit('curl', ['-sS', '-m', '10', '-w', '\n%{http_code}', `${ctx.api}/api/${project}/cron/db-vacuum/${p.publicKey}/?status=in_progress`]);
  expect(curl.stdout).toBe('{}\n202');
  const res = await fetch(`${ctx.api}/api/${project}/cron/db-vacuum/?sentry_key=${p.publicKey}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ status: 'ok', duration: 2.5, monitor_config: { schedule: { type: 'interval', value: 1, unit: 'hour' } } }),
  });
  expect(res.status).toBe(202);
  await drained(ctx);
  expect(await ctx.runtime.monitorsState.read({ project, slug: 'db-vacuum', environment: 'production' })).toMatchObject({ status: 'ok', open: [] });
  expect((await ctx.runtime.stores.checkins.monitor(project, 'db-vacuum'))?.config.schedule).toEqual({ type: 'interval', value: 1, unit: 'hour' });
});

it('heartbeats: curl in a crontab pings start and an exit status, paired by rid; fail, log and HEAD; a bad signal named', async () => {
  const p = await makeProject(ctx);
  const project = Number(p.project.id);
  const curl = (path: string, ...flags: string[]) => runToExit('curl', ['-sS', '-m', '10', ...flags, '-w', '\n%{http_code}', `${ctx.api}/ping/${p.publicKey}/${path}`]);
  const rid = crypto.randomUUID();
  expect((await curl(`backup/start?rid=${rid}`)).stdout).toBe('{}\n200');
  await new Promise((r) => setTimeout(r, 300));
  expect((await curl(`backup/0?rid=${rid}`, '-X', 'POST', '--data-raw', 'backup done')).stdout).toBe('{}\n200');
  expect((await curl('export/1')).stdout).toBe('{}\n200');
  expect((await curl('export/log')).stdout).toBe('{}\n200');
  expect((await curl('report', '-I')).stdout).toMatch(/^HTTP\/1.1 200/);
  const bad = await curl('export/maybe');
  expect(bad.stdout).toMatch(/"reason":"invalid_check_in".*"path":"signal".*\n400$/s);
  expect((await curl('export/256')).stdout).toMatch(/\n400$/);
  await drained(ctx);
  const [run] = await ctx.runtime.stores.checkins.history(project, 'backup', 'production', 10);
  // the start and the end are one run, timed from the start
  expect(run).toMatchObject({ id: rid.replace(/-/g, ''), status: 'ok' });
  expect(run!.duration_ms!).toBeGreaterThanOrEqual(300);
  expect(await ctx.runtime.monitorsState.read({ project, slug: 'export', environment: 'production' })).toMatchObject({ status: 'error', failures_in_row: 1 });
  expect((await ctx.runtime.stores.checkins.history(project, 'export', 'production', 10)).map((r) => r.status).sort()).toEqual(['error', 'unknown']);
  expect(await ctx.runtime.monitorsState.read({ project, slug: 'report', environment: 'production' })).toMatchObject({ status: 'ok' });
});

it('bad input is named: an unknown status, a bad schedule, a missing key; another project’s key is refused', async () => {
  const p = await makeProject(ctx);
  const other = await makeProject(ctx);
  const project = Number(p.project.id);
  expect(await get(`/api/${project}/cron/job/${p.publicKey}/?status=done`)).toMatchObject({ status: 400, body: { reason: 'invalid_check_in', errors: [{ path: 'status' }] } });
  const bad = await fetch(`${ctx.api}/api/${project}/cron/job/${p.publicKey}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ status: 'ok', monitor_config: { schedule: { type: 'crontab', value: '61 * * * *' }, timezone: 'Europe/Berlin' } }),
  });
  expect([bad.status, (await bad.json()).errors]).toEqual([400, [{ path: '/monitor_config/schedule/value', message: expect.stringContaining('crontab') }]]);
  expect(await get(`/api/${project}/cron/job/?status=ok`)).toMatchObject({ status: 401, body: { reason: 'missing_key' } });
  expect(await get(`/api/${project}/cron/job/${other.publicKey}/?status=ok`)).toMatchObject({ status: 403, body: { reason: 'project_mismatch' } });
  expect(await get(`/api/${project}/cron/!!!/${p.publicKey}/?status=ok`)).toMatchObject({ status: 400, body: { errors: [{ path: 'slug' }] } });
});

it('a monitor is held to 6 check-ins a minute: the rest answered 202, counted as dropped, not stored', async () => {
  const p = await makeProject(ctx);
  const project = Number(p.project.id);
  const statuses = [];
  for (let i = 0; i < 8; i++) statuses.push((await get(`/api/${project}/cron/chatty/${p.publicKey}/?status=ok`)).status);
  expect(statuses).toEqual(Array(8).fill(202));
  await drained(ctx);
  await ctx.runtime.ingestStats.flush();
  const counts = await ctx.runtime.ingestStats.read(project, 1);
  expect(counts.accepted.check_in).toBe(6);
  expect(counts.dropped).toContainEqual({ type: 'check_in', reason: 'rate_limited', count: 2 });
});

it('in an envelope, a check-in that cannot be used is dropped and counted while the rest is kept', async () => {
  const p = await makeProject(ctx);
  const project = Number(p.project.id);
  const lines = [
    { event_id: 'a'.repeat(32) },
    { type: 'check_in' },
    { check_in_id: 'b'.repeat(32), monitor_slug: 'etl', status: 'ok', monitor_config: { schedule: { type: 'crontab', value: '* * * * *' }, timezone: 'Mars/Base' } },
    { type: 'check_in' },
    { check_in_id: 'c'.repeat(32), monitor_slug: 'etl-2', status: 'in_progress' },
  ].map((l) => JSON.stringify(l));
  const res = await fetch(`${ctx.api}/api/${project}/envelope/?sentry_key=${p.publicKey}`, { method: 'POST', headers: { 'content-type': 'application/x-sentry-envelope' }, body: lines.join('\n') });
  expect([res.status, (await res.json()).dropped]).toEqual([200, ['check_in']]);
  await drained(ctx);
  expect(await ctx.runtime.monitorsState.read({ project, slug: 'etl-2', environment: 'production' })).toMatchObject({ status: 'ok', open: [{ id: 'c'.repeat(32) }] });
  expect(await ctx.runtime.stores.checkins.monitor(project, 'etl')).toBeNull();
  await ctx.runtime.ingestStats.flush();
  expect((await ctx.runtime.ingestStats.read(project, 1)).dropped).toContainEqual({ type: 'check_in', reason: 'invalid', count: 1 });
});
