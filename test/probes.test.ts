/**
 * Uptime probes (issue 68) against real local servers, checked by the probes service on real Redis and the store,
 * its issues and notifications through the workers: a site that starts answering 500 raises "Downtime" after 3
 * failed checks (each confirmed) and resolves when it recovers; an https site whose certificate expires in 5 days
 * raises the certificate warning; a probe to an inward address is refused unless the operator allows it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeProbesService } from '../src/services/probes.service.ts';
import { makeProbesState } from '../src/state/probes.state.ts';
import { makeProject, type TestContext } from './helpers/context.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { until } from './helpers/until.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['notifications'], (c) => (ctx = c), { WEBHOOK_ALLOW_PRIVATE: 'true', PROBE_ALLOW_PRIVATE: 'true', FLUSH_INTERVAL_MS: '100' });
let receiver: Receiver;
let site: http.Server;
let siteStatus = 200;
let secure: https.Server;
let dir: string;
const urlOf = (server: http.Server | https.Server, scheme: string) => `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}/health`;

beforeAll(async () => {
  receiver = await startReceiver();
  site = http.createServer((req, res) => res.writeHead(siteStatus, { 'content-type': 'text/plain' }).end(siteStatus === 200 ? 'all good' : 'broken'));
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  // a self-signed certificate that expires in 5 days
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-probe-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '5', '-subj', '/CN=127.0.0.1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
  secure = https.createServer({ key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) }, (req, res) => res.end('ok'));
  await new Promise<void>((r) => secure.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  await receiver?.close();
  site?.close();
  secure?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function watched() {
  const p = await makeProject(ctx);
  const project = Number(p.project.id);
  const hook = `/hook/${project}`;
  await ctx.runtime.notifications.add(project, { webhook: `${receiver.url}${hook}` });
  return { project, got: (event: string) => receiver.of(event).filter((r) => r.path === hook) };
}

const MINUTE = 60_000;

it('a site that answers 500 is down after 3 failed checks, each confirmed, and its issue resolves when it is up again', { timeout: 60_000 }, async () => {
  const p = await watched();
  const probe = await ctx.runtime.probes.add(p.project, { url: urlOf(site, 'http'), interval_min: 1, keyword: 'good' }, new Date());
  // the checks a worker would make, minute by minute (this file's workers do not run the probes)
  let now = Date.now() + 10_000; // a new probe's first check is due within 10 s
  const check = async () => {
    expect(await ctx.runtime.probes.runDue(now)).toBe(1);
    now += MINUTE;
  };
  await check();
  siteStatus = 500;
  await check();
  await check();
  expect(p.got('uptime.down')).toHaveLength(0);
  await check();
  await until(() => p.got('uptime.down').length === 1);
  expect(p.got('uptime.down')[0]!.body).toMatchObject({ url: urlOf(site, 'http'), reason: 'status_500', issue: { title: `Downtime: ${urlOf(site, 'http')}`, kind: 'uptime', status: 'unresolved' } });
  await check(); // still down: counted, not told again
  siteStatus = 200;
  await check();
  await until(() => p.got('uptime.up').length === 1);
  const issue = Number(p.got('uptime.down')[0]!.body.issue.id);
  expect((await ctx.runtime.issuesState.issues(p.project, [issue])).get(issue)).toMatchObject({ status: 'resolved', event_count: 2 });
  const shown = await ctx.runtime.probes.show(p.project, Number(probe.id), new Date(now));
  expect(shown.results.map((r) => (r.ok ? 'up' : r.reason))).toEqual(['up', 'status_500', 'status_500', 'status_500', 'status_500', 'up']);
  expect(shown.uptime.day).toBeCloseTo(2 / 6);
  expect(shown.state).toMatchObject({ status: 'up', failures_in_row: 0 });
});

it('an https certificate that expires in 5 days is warned of once, at 14 days', async () => {
  const p = await watched();
  await ctx.runtime.probes.add(p.project, { url: urlOf(secure, 'https'), insecure_tls: true }, new Date());
  expect(await ctx.runtime.probes.runDue(Date.now() + 10_000)).toBeGreaterThanOrEqual(1);
  await until(() => p.got('certificate.expiring').length === 1);
  expect(p.got('certificate.expiring')[0]!.body).toMatchObject({ host: `127.0.0.1:${(secure.address() as AddressInfo).port}`, days: 14, issue: { kind: 'uptime' } });
  expect(p.got('uptime.down')).toHaveLength(0);
  // checked again: nothing new to say until 3 days are left
  expect(await ctx.runtime.probes.runDue(Date.now() + 6 * MINUTE)).toBeGreaterThanOrEqual(1);
  await new Promise((r) => setTimeout(r, 500));
  expect(p.got('certificate.expiring')).toHaveLength(1);
});

it('a probe to an inward address is refused unless PROBE_ALLOW_PRIVATE=true, and refused at check time if its name moves inward', async () => {
  const p = await watched();
  const guarded = makeProbesService({ store: ctx.runtime.stores.probes, state: makeProbesState(ctx.runtime.issuesState.redis, { prefix: `probes-${p.project}` }), allowPrivate: false, log: ctx.runtime.log });
  for (const url of ['http://127.0.0.1:8080/', 'http://10.1.2.3/', 'http://169.254.169.254/latest/meta-data']) {
    await expect(guarded.add(p.project, { url }, new Date())).rejects.toMatchObject({ status: 422, reason: 'target_refused' });
  }
  await expect(guarded.add(p.project, { url: 'ftp://example.com/' }, new Date())).rejects.toMatchObject({ status: 400, reason: 'invalid_probe', details: { errors: [{ path: '/url' }] } });
  // a probe whose address is judged again at each check (here: one that was allowed, checked without the allowance)
  const result = await guarded.checkOnce({ ...(await ctx.runtime.probes.add(p.project, { url: urlOf(site, 'http') }, new Date())), expect_status: [{ from: 200, to: 399 }] }, false);
  expect(result).toMatchObject({ ok: false, reason: expect.stringMatching(/^refused: .*loopback/) });
});
