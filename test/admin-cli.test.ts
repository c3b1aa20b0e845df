/** The admin CLI as an operator runs it: one JSON document on stdout, errors on stderr. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { call, startTestContext, type TestContext } from './helpers/context.ts';
import { runCli } from './helpers/process.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

const admin = async (...args: string[]) => {
  const res = await runCli(['admin', ...args], ctx.env);
  return { ...res, json: res.code === 0 ? JSON.parse(res.stdout) : undefined };
};

// Each command is a process of its own (about a second to start on a slow host); the longest test runs some twenty.
describe('lookout admin', { timeout: 90_000 }, () => {
  it('creates an organisation and a project whose keys work against the API', async () => {
    const org = await admin('org', 'create', '--name', 'Acme', '--plan', 'team', '--seats', '3');
    expect(org.code).toBe(0);
    expect(org.json).toMatchObject({ id: expect.any(String), name: 'Acme', plan: 'team', seats: 3, used: 0 });

    const project = await admin('project', 'create', '--org', org.json.id, '--name', 'shop', '--security-monitoring', 'off');
    expect(project.json).toEqual({ id: expect.any(String), org: org.json.id, name: 'shop', slug: 'shop', public_key: expect.stringMatching(/^[0-9a-f]{32}$/), secret_key: expect.stringMatching(/^lk_sk_/) });

    const res = await call(ctx, 'POST', '/api/v1/sdk/activate', { key: project.json.secret_key, body: { instance_id: 'inst-cli-00001' } });
    expect(res.status).toBe(200);
    expect(res.body.features).toEqual({ security_monitoring: false, plan: 'team', seats: 3 });

    const shown = await admin('project', 'show', '--project', project.json.id);
    expect(shown.json).toMatchObject({ id: project.json.id, instance_id: 'inst-cli-00001', security_monitoring: false });
    expect(shown.stdout).not.toContain(project.json.secret_key);
    expect(shown.stdout).not.toContain('secret');

    expect((await admin('project', 'set', '--project', project.json.id, '--enabled', 'off', '--security-monitoring', 'on')).json).toMatchObject({ enabled: false, security_monitoring: true });

    const unbound = await admin('project', 'unbind', '--project', project.json.id);
    expect(unbound.json).toEqual({ id: project.json.id, unbound: 'inst-cli-00001' });

    const rotated = await admin('key', 'rotate', '--project', project.json.id, '--kind', 'secret');
    expect(rotated.json.secret_key).toMatch(/^lk_sk_/);
    expect((await call(ctx, 'GET', '/api/v1/sdk/config', { key: project.json.secret_key })).status).toBe(401);
    expect((await call(ctx, 'GET', '/api/v1/sdk/config', { key: rotated.json.secret_key })).status).toBe(200);

    const pub = await admin('key', 'rotate', '--project', project.json.id, '--kind', 'public');
    expect(pub.json.public_key).toMatch(/^[0-9a-f]{32}$/);
  });

  it('manages members, invites and email rules and shows seat usage', async () => {
    const org = (await admin('org', 'create', '--name', 'People', '--seats', 'unlimited')).json;
    expect(org.seats).toBeNull();
    await admin('member', 'add', '--org', org.id, '--email', 'Boss@Acme.test');
    await admin('invite', 'add', '--org', org.id, '--email', 'new@acme.test');
    const rule = await admin('email-rule', 'add', '--org', org.id, '--email', 'boss@acme.test');
    expect(rule.json).toMatchObject({ members: ['boss@acme.test'], invites: ['new@acme.test'], email_rules: ['boss@acme.test'], used: 2 });
    const removed = await admin('invite', 'remove', '--org', org.id, '--email', 'new@acme.test');
    expect(removed.json).toMatchObject({ invites: [], used: 1 });
    expect((await admin('org', 'set', '--org', org.id, '--plan', 'business', '--seats', '10')).json).toMatchObject({ plan: 'business', seats: 10 });
  });

  it('user remove offboards a dashboard user: account, seat and sessions end', async () => {
    const org = (await admin('org', 'create', '--name', 'Leavers')).json;
    await ctx.runtime.accounts.addUser({ org: Number(org.id), email: 'gone@acme.test', role: 'member', password: 'a long enough password' });
    const { token } = await ctx.runtime.accounts.signIn({ email: 'gone@acme.test', password: 'a long enough password' }, { ip: '192.0.2.1', userAgent: 'test' });
    expect(await ctx.runtime.accounts.session(token)).not.toBeNull();
    expect((await admin('user', 'remove', '--org', org.id, '--email', 'Gone@acme.test')).json).toEqual({ removed: 'gone@acme.test', org: org.id });
    expect(await ctx.runtime.accounts.session(token)).toBeNull();
    expect((await admin('org', 'show', '--org', org.id)).json.members).toEqual([]);
    const again = await admin('user', 'remove', '--org', org.id, '--email', 'gone@acme.test');
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('user_not_found');
  });

  it('sets alert settings', async () => {
    const org = (await admin('org', 'create', '--name', 'Alerts')).json;
    const project = (await admin('project', 'create', '--org', org.id, '--name', 'p')).json;
    const set = await admin('alerts', 'set', '--project', project.id, '--threshold', '3', '--window-seconds', '60', '--cooldown-seconds', '120', '--decision-seconds', '600');
    expect(set.json.alerts).toEqual({
      threshold: 3,
      window_seconds: 60,
      cooldown_seconds: 120,
      stuffing_threshold: 10,
      decision_seconds: 600,
      decision_mode: 'enforce',
      allowlist: [],
      escalate: false,
      decision_max_seconds: 604_800,
      decision_types: { brute_force: 'ban', credential_stuffing: 'ban' },
    });
    // the policy: monitoring, an allowlist, escalation, captcha for one detector (the other keeps its type)
    const policy = await admin('alerts', 'set', '--project', project.id, '--decision-mode', 'monitor', '--allowlist', '192.0.2.0/24, ops@acme.example', '--escalate', 'on', '--stuffing-decision', 'captcha');
    expect(policy.json.alerts).toMatchObject({ decision_mode: 'monitor', allowlist: ['192.0.2.0/24', 'ops@acme.example'], escalate: true, decision_types: { brute_force: 'ban', credential_stuffing: 'captcha' } });
    const bad = await admin('alerts', 'set', '--project', project.id, '--decision-mode', 'sometimes');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('decision_mode');
  });

  it('lists decisions and refuses to lift one that is not in force', async () => {
    const org = (await admin('org', 'create', '--name', 'Decided')).json;
    const project = (await admin('project', 'create', '--org', org.id, '--name', 'p')).json;
    expect((await admin('decisions', 'list', '--project', project.id)).json).toEqual({ decisions: [] });
    const lift = await admin('decisions', 'lift', '--project', project.id, '--decision', 'd1');
    expect(lift.code).toBe(1);
    expect(lift.stderr).toMatch(/^decision_not_found: /);
    expect((await admin('decisions', 'lift', '--project', project.id)).code).toBe(2);
  });

  it.each([
    [['org', 'create'], 2, /--name is required/],
    [['org', 'create', '--name', 'x', '--seats', 'lots'], 2, /--seats/],
    [['project', 'show', '--project', '999999'], 1, /project_not_found/],
    [['project', 'show', '--project', 'abc'], 2, /numeric id/],
    [['key', 'rotate', '--project', '1', '--kind', 'both'], 2, /secret or public/],
    [['member', 'add', '--org', '1', '--email', 'not-an-email'], 1, /invalid_email|org_not_found/],
    [['fly', 'away'], 2, /unknown admin command: fly away/],
    [['org'], 2, /org needs one of: create, list, set, show/],
    [['org', 'create', '--name', 'x', '--bogus'], 2, /unknown option --bogus; the options here are --name, --plan, --seats/],
    [['org', 'create', '--name', 'x', '--project', '1'], 2, /unknown option --project/],
    [['org', 'create', '--name'], 2, /--name needs a value/],
    [['org', 'list', 'extra'], 2, /unexpected argument: extra/],
  ])('%j fails with exit %i and one line on stderr', async (args, code, message) => {
    const res = await admin(...(args as string[]));
    expect(res.code).toBe(code);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(message);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('lists organisations and projects as JSON', async () => {
    const org = (await admin('org', 'create', '--name', 'Listed')).json;
    const project = (await admin('project', 'create', '--org', org.id, '--name', 'listed-shop')).json;
    const orgs = await admin('org', 'list');
    expect(orgs.code).toBe(0);
    expect(orgs.json.orgs).toContainEqual({ id: org.id, name: 'Listed', slug: 'listed', plan: 'free', seats: null, created_at: expect.any(String) });
    const projects = await admin('project', 'list', '--org', org.id);
    expect(projects.json.projects).toEqual([expect.objectContaining({ id: project.id, org: org.id, name: 'listed-shop', public_key: project.public_key })]);
    expect(projects.stdout).not.toContain(project.secret_key);
    expect((await admin('project', 'list')).json.projects.map((p: { id: string }) => p.id)).toContain(project.id);
  });

  it('--help and help <command> print every command with its options and exit 0', async () => {
    const top = await runCli(['--help'], ctx.env);
    expect(top.code).toBe(0);
    for (const command of ['start', 'api', 'worker', 'admin', 'org create', 'org list', 'project list', 'project unbind', 'key rotate', 'alerts set', 'recount']) {
      expect(top.stdout).toContain(command);
    }
    const one = await runCli(['help', 'admin', 'project', 'create'], ctx.env);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('project create --org ID --name N');
    expect(one.stdout).not.toContain('org list');
    expect((await runCli(['help', 'worker'], ctx.env)).stdout).toContain('--concurrency');
    expect((await runCli(['help', 'nothing'], ctx.env)).code).toBe(2);
  });

  it.each([
    [['worker', '--queues', 'bogus'], /--queues: unknown queue bogus; the queues are sessions, events, notifications, maintenance/],
    [['worker', '--concurrency', 'lots'], /--concurrency takes a whole number from 1 to 1000, not "lots"/],
    [['worker', '--threads', '2'], /unknown option --threads/],
    [['api', '--port', '80'], /unknown option --port; this command takes no options/],
    [['frobnicate'], /unknown command: frobnicate/],
  ])('lookout %j is a usage error: exit 2, one line, no stack trace', async (args, message) => {
    const res = await runCli(args, ctx.env);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('answers within a few seconds when a store cannot be reached, naming the variables that fix it', async () => {
    const { MONGODB_URL: _m, ...env } = ctx.env;
    const started = Date.now();
    const res = await runCli(['admin', 'org', 'list'], { ...env, LOOKOUT_EMBEDDED_MONGODB_PORT: '1', LOOKOUT_DATA_DIR: '/nonexistent-lookout' });
    expect(res.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(15_000); // a hang guard, not a timing claim: the CLI waits 3 s
    expect(res.stderr).toMatch(/cannot reach MongoDB at mongodb:\/\/127\.0\.0\.1:1\/.*no Lookout runs in \/nonexistent-lookout.*npm start.*LOOKOUT_DATA_DIR.*MONGODB_URL/);
  });

  it('reaches the embedded stores when no URL is set', async () => {
    const port = new URL(inject('mongoUrl')).port;
    const { MONGODB_URL: _m, ...env } = ctx.env;
    const res = await runCli(['admin', 'org', 'create', '--name', 'Embedded'], { ...env, LOOKOUT_EMBEDDED_MONGODB_PORT: port });
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout).name).toBe('Embedded');
  });

  it('stops with one message naming every bad variable', async () => {
    const res = await runCli(['admin', 'org', 'show', '--org', '1'], { ...ctx.env, PORT: 'x', REDIS_URL: 'ftp://nope' });
    expect(res.code).toBe(78);
    expect(res.stderr).toMatch(/PORT/);
    expect(res.stderr).toMatch(/REDIS_URL/);
  });
});

describe('lookout admin notify', { timeout: 90_000 }, () => {
  it('adds a webhook (its secret shown only then), lists, tests, rotates, removes, and refuses inward targets naming the rule', async () => {
    const org = (await admin('org', 'create', '--name', 'Notified')).json;
    const project = (await admin('project', 'create', '--org', org.id, '--name', 'shop')).json;
    const added = await admin('notify', 'add', '--project', project.id, '--webhook', 'https://93.184.215.14/hooks/lookout', '--format', 'slack', '--on', 'issue.created,release.crash_free', '--crash-free-below', '99.5', '--min-sessions', '50');
    expect(added.code).toBe(0);
    expect(added.json).toMatchObject({ id: expect.any(String), kind: 'webhook', url: 'https://93.184.215.14/hooks/lookout', format: 'slack', on: ['issue.created', 'release.crash_free'], crash_free: { threshold: 99.5, min_sessions: 50 }, secret: expect.stringMatching(/^whsec_/) });

    const listed = await admin('notify', 'list', '--project', project.id);
    expect(listed.json.channels).toEqual([expect.objectContaining({ id: added.json.id, paused: false })]);
    expect(listed.stdout).not.toContain(added.json.secret);
    expect(listed.stdout).not.toContain('secret');

    const rotated = await admin('notify', 'rotate', '--project', project.id, '--channel', added.json.id);
    expect(rotated.json.secret).toMatch(/^whsec_/);
    expect(rotated.json.secret).not.toBe(added.json.secret);

    const test = await admin('notify', 'test', '--project', project.id, '--channel', added.json.id);
    expect(test.json).toMatchObject({ delivery: expect.stringMatching(/^n\d+-t\d+-\d+$/), status: 'queued' });
    const deliveries = await admin('notify', 'deliveries', '--project', project.id);
    expect(deliveries.json.deliveries[0]).toMatchObject({ id: test.json.delivery, channel: added.json.id, event: 'test', status: 'queued', attempts: 0, last_status: null, last_error: null, created_at: expect.any(String), delivered_at: null });

    for (const [url, rule] of [['http://127.0.0.1:8080/hook', 'loopback'], ['http://192.168.1.20/hook', 'private'], ['http://169.254.169.254/latest', 'link-local']]) {
      const refused = await admin('notify', 'add', '--project', project.id, '--webhook', url!);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`target_refused: `);
      expect(refused.stderr).toContain(`a ${rule}`);
    }
    const email = await admin('notify', 'add', '--project', project.id, '--email', 'ops@shop.example');
    expect(email.code).toBe(1);
    expect(email.stderr).toMatch(/SMTP_URL/);

    expect((await admin('notify', 'remove', '--project', project.id, '--channel', added.json.id)).json).toEqual({ removed: added.json.id });
    expect((await admin('notify', 'list', '--project', project.id)).json.channels).toEqual([]);
  });

  it.each([
    [['notify', 'add', '--project', '1'], /one of --webhook URL or --email ADDRESS/],
    [['notify', 'add', '--project', '1', '--webhook', 'https://x.example', '--on', 'issue.created,coffee'], /unknown trigger coffee/],
    [['notify', 'remove', '--project', '1'], /--channel is required/],
    [['notify', 'fly', '--project', '1'], /unknown admin command: notify fly/],
  ])('a usage error exits 2: %j', async (args, message) => {
    const res = await admin(...args);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
  });
});

describe('lookout admin monitor', { timeout: 90_000 }, () => {
  it('adds a monitor with its schedule in its time zone, lists, shows, pauses, resumes and removes it; bad values named', async () => {
    const org = (await admin('org', 'create', '--name', 'Watched')).json;
    const project = (await admin('project', 'create', '--org', org.id, '--name', 'shop')).json;
    const added = await admin('monitor', 'add', '--project', project.id, '--slug', 'Nightly Backup', '--name', 'Nightly backup', '--schedule', '30 2 * * *', '--timezone', 'Europe/Berlin', '--margin', '5');
    expect(added.code, added.stderr).toBe(0);
    expect(added.json).toMatchObject({
      slug: 'nightly-backup',
      name: 'Nightly backup',
      paused: false,
      config: { schedule: { type: 'crontab', value: '30 2 * * *' }, timezone: 'Europe/Berlin', checkin_margin: 5, max_runtime: 30, failure_issue_threshold: 1 },
      environments: [],
    });
    // the next five runs, each at 02:30 in Berlin (an hour or two earlier in UTC)
    expect(added.json.next_runs).toHaveLength(5);
    for (const run of added.json.next_runs) expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', timeStyle: 'short' }).format(new Date(run))).toBe('02:30');
    const changed = await admin('monitor', 'add', '--project', project.id, '--slug', 'nightly-backup', '--every', '6 hours');
    expect(changed.json).toMatchObject({ name: 'Nightly backup', config: { schedule: { type: 'interval', value: 6, unit: 'hour' }, checkin_margin: 5 } });
    expect((await admin('monitor', 'list', '--project', project.id)).json.monitors.map((m: { slug: string }) => m.slug)).toEqual(['nightly-backup']);
    expect((await admin('monitor', 'pause', '--project', project.id, '--slug', 'nightly-backup')).json.paused).toBe(true);
    expect((await admin('monitor', 'resume', '--project', project.id, '--slug', 'nightly-backup')).json.paused).toBe(false);
    expect((await admin('monitor', 'show', '--project', project.id, '--slug', 'nightly-backup')).json.environments).toEqual([]);
    const bad = await admin('monitor', 'add', '--project', project.id, '--slug', 'job', '--timezone', 'Mars/Olympus');
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining('invalid_monitor: /config/timezone: must be a time zone')]);
    const window = await admin('maintenance', 'add', '--project', project.id, '--from', '2026-12-01T02:00:00Z', '--to', '2026-12-01T04:00:00Z', '--slug', 'nightly-backup');
    expect(window.json).toEqual({ id: expect.any(String), from: '2026-12-01T02:00:00.000Z', to: '2026-12-01T04:00:00.000Z', monitor: 'nightly-backup' });
    expect((await admin('maintenance', 'list', '--project', project.id)).json.windows).toHaveLength(1);
    const backwards = await admin('maintenance', 'add', '--project', project.id, '--from', '2026-12-01T02:00:00Z', '--to', '2026-12-01T01:00:00Z');
    expect([backwards.code, backwards.stderr]).toEqual([1, expect.stringContaining('invalid_window: /to: must be after from')]);
    expect((await admin('maintenance', 'remove', '--project', project.id, '--window', window.json.id)).json).toEqual({ removed: window.json.id });
    expect((await admin('monitor', 'remove', '--project', project.id, '--slug', 'nightly-backup')).json).toEqual({ removed: 'nightly-backup' });
    const gone = await admin('monitor', 'show', '--project', project.id, '--slug', 'nightly-backup');
    expect([gone.code, gone.stderr]).toEqual([1, expect.stringContaining('monitor_not_found')]);
  });

  it.each([
    [['monitor', 'add', '--project', '1'], /--slug is required/],
    [['monitor', 'add', '--project', '1', '--slug', 'a', '--every', 'often'], /--every takes a number and a unit/],
    [['monitor', 'add', '--project', '1', '--slug', 'a', '--every', '1 day', '--schedule', '* * * * *'], /one of --schedule or --every/],
  ])('a usage error exits 2: %j', async (args, message) => {
    const res = await admin(...args);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(message);
  });
});
