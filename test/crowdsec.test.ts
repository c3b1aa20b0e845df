/**
 * CrowdSec's decisions API for bouncers (issue 49), through the real ingest path: sign-in bursts posted to the API,
 * applied by real workers, pulled with a bouncer key. Then Debian's real `crowdsec-custom-bouncer`, pointed at
 * Lookout as at a CrowdSec API, runs its script with the address of each decision made and lifted.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { goDuration } from '../src/services/bouncers.service.ts';
import { boundProject, call, eventId, type TestContext } from './helpers/context.ts';
import { stopChild } from './helpers/process.ts';
import { ensureDebian } from './helpers/real-clients.ts';
import { until } from './helpers/until.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['events'], (c) => (ctx = c), { FLUSH_INTERVAL_MS: '100' });

interface Pulled {
  new: { id: number; origin: string; scenario: string; scope: string; type: string; value: string; duration: string }[] | null;
  deleted: Pulled['new'];
}

async function project() {
  const p = await boundProject(ctx);
  let n = 0;
  const fail = (actor: string | undefined, ip: string | undefined) =>
    p.send({
      event_id: eventId(),
      timestamp: new Date(Date.now() - 60_000 + n++ * 100).toISOString(),
      security: { kind: 'login_failed', ...(actor && { actor }), ...(ip && { ip }) },
    });
  const burst = async (actor: string | undefined, ip: string | undefined, count = 5) => {
    for (let i = 0; i < count; i++) expect((await fail(actor, ip)).status).toBe(202);
  };
  const bouncer = await ctx.runtime.bouncers.add(p.id, 'edge-nginx');
  const pull = async (query = '', key = bouncer.key) => {
    const res = await call(ctx, 'GET', `/v1/decisions/stream${query}`, { headers: { 'x-api-key': key, 'user-agent': 'crowdsec-test/v1.2.3' } });
    return res as { status: number; body: Pulled };
  };
  return { ...p, burst, bouncer, pull };
}

describe('GET /v1/decisions/stream', () => {
  it('startup gives every decision in force, then each pull only what changed; a lift is a deletion with its address', async () => {
    const p = await project();
    expect((await p.pull('?startup=true')).body).toEqual({ new: null, deleted: null });
    await p.burst('admin', '203.0.113.7');
    let added: Pulled = { new: null, deleted: null };
    await until(async () => (added = (await p.pull()).body).new !== null);
    expect(added.deleted).toBeNull();
    expect(added.new).toEqual([
      {
        id: expect.any(Number),
        origin: 'lookout',
        scenario: 'lookout/brute-force',
        scope: 'Ip',
        type: 'ban',
        value: '203.0.113.7',
        duration: expect.stringMatching(/^(59m\d+s|1h0m0s)$/),
        until: expect.any(String),
      },
    ]);
    // nothing changed since: nothing to say
    expect((await p.pull()).body).toEqual({ new: null, deleted: null });
    // a restarted bouncer asks for everything again
    expect((await p.pull('?startup=true')).body.new).toHaveLength(1);

    const [decision] = (await ctx.runtime.decisions.list(p.id, new Date())).decisions;
    await ctx.runtime.decisions.lift(p.id, decision!.id, new Date());
    const lifted = (await p.pull()).body;
    expect(lifted.new).toBeNull();
    expect(lifted.deleted).toEqual([
      expect.objectContaining({ id: added.new![0]!.id, scope: 'Ip', value: '203.0.113.7', scenario: 'lookout/brute-force', duration: expect.any(String) }),
    ]);
    expect((await p.pull()).body).toEqual({ new: null, deleted: null });
    // a startup after the lift lists nothing (each process' copy of the list follows the change log)
    expect((await p.pull('?startup=true')).body).toEqual({ new: null, deleted: null });

    // the owner sees the bouncer's last pull: from where, and which bouncer (noted beside the answer)
    await until(async () => (await ctx.runtime.bouncers.list(p.id)).bouncers[0]?.last_pull !== null);
    const [listed] = (await ctx.runtime.bouncers.list(p.id)).bouncers;
    expect(listed).toMatchObject({ id: p.bouncer.id, name: 'edge-nginx', last_pull: { ip: expect.any(String), user_agent: 'crowdsec-test/v1.2.3' } });
    expect(JSON.stringify(listed)).not.toContain(p.bouncer.key);
  });

  it('credential stuffing is an address decision; one naming only an account goes to bouncers that ask for usernames', async () => {
    const p = await project();
    await p.pull('?startup=true');
    await p.pull('?startup=true&scopes=ip,username');
    for (let i = 0; i < 10; i++) await p.burst(`user${i}@example.com`, '198.51.100.9', 1);
    await p.burst('root', undefined);
    await until(async () => (await ctx.runtime.decisions.list(p.id, new Date())).decisions.length === 2);
    const ips = (await p.pull('?startup=true')).body.new!;
    expect(ips.map((d) => [d.scope, d.value, d.scenario])).toEqual([['Ip', '198.51.100.9', 'lookout/credential-stuffing']]);
    const all = (await p.pull('?startup=true&scopes=ip,username')).body.new!;
    expect(all.map((d) => [d.scope, d.value]).sort()).toEqual([
      ['Ip', '198.51.100.9'],
      ['username', 'root'],
    ]);
    expect((await p.pull('?startup=true&scenarios_containing=brute&scopes=ip,username')).body.new!.map((d) => d.value)).toEqual(['root']);
    expect((await p.pull('?startup=true&scenarios_not_containing=stuffing')).body.new).toBeNull();
    expect((await p.pull('?startup=true&origins=crowdsec')).body.new).toBeNull();

    const live = await call(ctx, 'GET', '/v1/decisions?ip=198.51.100.9', { headers: { 'x-api-key': p.bouncer.key } });
    expect(live.body).toEqual([expect.objectContaining({ value: '198.51.100.9', scope: 'Ip' })]);
    expect((await call(ctx, 'GET', '/v1/decisions?range=198.51.100.0/24', { headers: { 'x-api-key': p.bouncer.key } })).body).toHaveLength(1);
    expect((await call(ctx, 'GET', '/v1/decisions?ip=192.0.2.1', { headers: { 'x-api-key': p.bouncer.key } })).body).toBeNull();
    expect((await call(ctx, 'GET', '/v1/decisions?range=nonsense', { headers: { 'x-api-key': p.bouncer.key } })).status).toBe(400);
  });

  it('credential stuffing spread over an IPv6 /64 is one issue and a Range decision; one address of it alone is that address', async () => {
    const p = await project();
    await p.pull('?startup=true');
    // ten accounts, each from another address of one /64: no address reaches the threshold, the /64 does
    for (let i = 0; i < 10; i++) await p.burst(`v6user${i}@example.com`, `2001:db8:7:7::${(i + 1).toString(16)}`, 1);
    await until(async () => (await ctx.runtime.decisions.list(p.id, new Date())).decisions.length === 1);
    let issues: { id: string; title: string }[] = [];
    await until(async () => (issues = (await p.get('/issues?kind=security')).body.issues).length > 0);
    expect(issues.map((i) => i.title)).toEqual(['Failed sign-ins on many accounts from 2001:db8:7:7::/64']);
    const detail = (await p.get(`/issues/${issues[0]!.id}`)).body;
    expect(detail.spread.addresses).toHaveLength(10);
    const pulled = (await p.pull()).body.new!;
    expect(pulled.map((d) => [d.scope, d.value, d.scenario])).toEqual([['Range', '2001:db8:7:7::/64', 'lookout/credential-stuffing']]);
    const live = await call(ctx, 'GET', '/v1/decisions?ip=2001:db8:7:7::abcd', { headers: { 'x-api-key': p.bouncer.key } });
    expect(live.body).toEqual([expect.objectContaining({ scope: 'Range', value: '2001:db8:7:7::/64' })]);
    expect((await call(ctx, 'GET', '/v1/decisions?ip=2001:db8:7:8::1', { headers: { 'x-api-key': p.bouncer.key } })).body).toBeNull();
    expect((await call(ctx, 'GET', '/v1/decisions?ip=nonsense', { headers: { 'x-api-key': p.bouncer.key } })).status).toBe(400);

    // one IPv6 address of another /64 trying ten accounts: its own issue and decision, not its /64's as well
    const q = await project();
    for (let i = 0; i < 10; i++) await q.burst(`solo${i}@example.com`, '2001:db8:9:9::5', 1);
    await until(async () => (await ctx.runtime.decisions.list(q.id, new Date())).decisions.length === 1);
    await until(async () => (await ctx.runtime.stores.events.backlog.size()) === 0 && (await q.get('/issues?kind=security')).body.issues.length > 0);
    expect((await ctx.runtime.decisions.list(q.id, new Date())).decisions).toHaveLength(1);
    const solo = (await q.get('/issues?kind=security')).body.issues as { title: string }[];
    expect(solo.map((i) => i.title)).toEqual(['Failed sign-ins on many accounts from 2001:db8:9:9::5']);
    // decisions made before the set bouncers' lists are written from (dw) are read whole instead
    await ctx.runtime.issuesState.redis.del(`${ctx.runtime.issuesState.keys(q.id).base}dw`);
    expect((await q.pull('?startup=true')).body.new!.map((d) => [d.scope, d.value])).toEqual([['Ip', '2001:db8:9:9::5']]);
  });

  it('a revoked or unknown key is refused (403), and a key pulls only its own project', async () => {
    const p = await project();
    const other = await project();
    await other.burst('admin', '192.0.2.50');
    await until(async () => (await ctx.runtime.decisions.list(other.id, new Date())).decisions.length === 1);
    expect((await p.pull('?startup=true')).body).toEqual({ new: null, deleted: null });
    expect((await p.pull('?startup=true', 'lkb_nonsense')).status).toBe(403);
    expect((await p.pull('?startup=true', '')).status).toBe(403);
    await ctx.runtime.bouncers.revoke(p.id, p.bouncer.id);
    const refused = await p.pull();
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ reason: 'invalid_bouncer_key' });
  });

  it('policy: an allowlisted address or account and a monitoring project make issues without decisions; a repeat offender escalates; captcha is a type', async () => {
    const p = await project();
    await ctx.runtime.admin.setAlerts(p.id, {
      allowlist: ['192.0.2.0/24', 'ops@acme.example'],
      escalate: true,
      decision_seconds: 60,
      decision_types: { brute_force: 'captcha' },
    });
    await p.pull('?startup=true');
    await p.burst('admin', '192.0.2.77');
    await p.burst('ops@acme.example', '198.51.100.77');
    const security = async () => (await p.get('/issues?kind=security')).body.issues as { title: string; policy: string | null; event_count: number }[];
    await until(async () => (await security()).filter((i) => i.event_count === 5).length === 2);
    expect((await security()).map((i) => i.policy)).toEqual(['allowlisted', 'allowlisted']);
    expect((await ctx.runtime.decisions.list(p.id, new Date())).decisions).toEqual([]);
    expect((await p.pull()).body).toEqual({ new: null, deleted: null });

    // escalation: the address's second decision within a day holds twice as long, and says so
    await p.burst('alice', '203.0.113.77');
    await until(async () => (await ctx.runtime.decisions.list(p.id, new Date())).decisions.length === 1);
    const [first] = (await ctx.runtime.decisions.list(p.id, new Date())).decisions;
    expect(first).toMatchObject({ type: 'captcha', escalation: 0 });
    expect(Date.parse(first!.until) - Date.parse(first!.created_at)).toBe(60_000);
    await ctx.runtime.decisions.lift(p.id, first!.id, new Date());
    await p.burst('bob', '203.0.113.77');
    await until(async () => (await ctx.runtime.decisions.list(p.id, new Date())).decisions.length === 1);
    const [second] = (await ctx.runtime.decisions.list(p.id, new Date())).decisions;
    expect(second).toMatchObject({ escalation: 1, ip: '203.0.113.77' });
    expect(Date.parse(second!.until) - Date.parse(second!.created_at)).toBe(120_000);
    const pulled = (await p.pull()).body;
    expect(pulled.new).toEqual([expect.objectContaining({ value: '203.0.113.77', type: 'captcha', duration: expect.stringMatching(/^(1m5\ds|2m0s)$/) })]);

    // monitoring: issues and notifications, no decision
    await ctx.runtime.admin.setAlerts(p.id, { decision_mode: 'monitor' });
    await new Promise((r) => setTimeout(r, 1100)); // the workers read a project's settings at most once a second
    await p.burst('carol', '203.0.113.88');
    await until(async () => (await security()).some((i) => i.title.includes('carol')));
    await new Promise((r) => setTimeout(r, 300));
    expect((await security()).find((i) => i.title.includes('carol'))!.policy).toBe('monitoring');
    expect((await ctx.runtime.decisions.list(p.id, new Date())).decisions.map((d) => d.ip)).toEqual(['203.0.113.77']);
  });

  it('writes durations as Go does', () => {
    expect([0, 999, 1000, 61_000, 3600_000, 3599_000 + 3600_000 * 3].map(goDuration)).toEqual(['0s', '0s', '1s', '1m1s', '1h0m0s', '3h59m59s']);
  });
});

describe("Debian's crowdsec-custom-bouncer", () => {
  it('runs its script with add for a burst, del for a lift, and stops when its key is revoked', async () => {
    ensureDebian(['crowdsec-custom-bouncer'], () => fs.existsSync('/usr/bin/crowdsec-custom-bouncer'));
    const p = await project();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-bouncer-'));
    const calls = path.join(dir, 'calls.log');
    const script = path.join(dir, 'act.sh');
    fs.writeFileSync(script, `#!/bin/sh\necho "$@" >> ${calls}\n`, { mode: 0o755 });
    const config = path.join(dir, 'bouncer.yaml');
    fs.writeFileSync(
      config,
      [
        `bin_path: ${script}`,
        'feed_via_stdin: false',
        'total_retries: 0',
        'update_frequency: 1s',
        'cache_retention_duration: 1s',
        'daemonize: false',
        'log_mode: stdout',
        'log_level: info',
        `piddir: ${dir}`,
        `api_url: ${ctx.api}/`,
        `api_key: ${p.bouncer.key}`,
        'prometheus:',
        '  enabled: false',
        '',
      ].join('\n'),
    );
    let output = '';
    const child = spawn('/usr/bin/crowdsec-custom-bouncer', ['-c', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const lines = () => (fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8').trim().split('\n') : []);
    try {
      await until(async () => (await ctx.runtime.bouncers.list(p.id)).bouncers[0]?.last_pull !== null, 15_000);
      const made = Date.now();
      await p.burst('admin', '203.0.113.66');
      await until(async () => lines().some((l) => l.startsWith('add 203.0.113.66 ')), 20_000);
      expect(Date.now() - made).toBeLessThan(15_000);
      const add = lines().find((l) => l.startsWith('add 203.0.113.66 '))!;
      const seconds = Number(add.split(' ')[2]);
      expect(seconds).toBeGreaterThan(3500);
      expect(seconds).toBeLessThanOrEqual(3600);
      expect(add).toContain('lookout/brute-force');

      const [decision] = (await ctx.runtime.decisions.list(p.id, new Date())).decisions;
      await ctx.runtime.decisions.lift(p.id, decision!.id, new Date());
      await until(async () => lines().some((l) => l.startsWith('del 203.0.113.66 ')), 15_000);

      // an allowlisted address never reaches the bouncer; the first address, decided again within a day, escalates
      await ctx.runtime.admin.setAlerts(p.id, { allowlist: ['192.0.2.0/24'], escalate: true });
      await new Promise((r) => setTimeout(r, 1100)); // the workers read a project's settings at most once a second
      await p.burst('admin', '192.0.2.66');
      await p.burst('root', '203.0.113.66');
      await until(async () => lines().filter((l) => l.startsWith('add 203.0.113.66 ')).length === 2, 20_000);
      const escalated = Number(
        lines()
          .filter((l) => l.startsWith('add 203.0.113.66 '))[1]!
          .split(' ')[2],
      );
      expect(escalated).toBeGreaterThan(7100);
      expect(escalated).toBeLessThanOrEqual(7200);
      expect(lines().filter((l) => l.includes('192.0.2.66'))).toEqual([]);
      await ctx.runtime.admin.setAlerts(p.id, { allowlist: [], escalate: false });
      for (const d of (await ctx.runtime.decisions.list(p.id, new Date())).decisions) await ctx.runtime.decisions.lift(p.id, d.id, new Date());

      // revoked: its pulls are refused
      await ctx.runtime.bouncers.revoke(p.id, p.bouncer.id);
      const before = lines().length;
      await p.burst('admin', '203.0.113.67');
      await until(async () => (await ctx.runtime.decisions.list(p.id, new Date())).decisions.length === 1);
      await new Promise((r) => setTimeout(r, 3000));
      expect(
        lines()
          .slice(before)
          .filter((l) => l.includes('203.0.113.67')),
      ).toEqual([]);
    } catch (err) {
      throw new Error(`${(err as Error).message}\nbouncer output:\n${output.slice(-2000)}\nscript calls:\n${lines().join('\n')}`, { cause: err });
    } finally {
      await stopChild(child);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
