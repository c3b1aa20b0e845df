/**
 * Notifications through the real ingest path: events and sessions posted to
 * the API, applied by real workers on Redis and FerretDB, delivered by the
 * notifications queue to a real webhook receiver and a real SMTP server on
 * loopback.
 */
import { SMTPServer } from 'smtp-server';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from 'bullmq';
import { sendNotice } from '../src/notify/send.ts';
import { deliverNotification } from '../src/notify/deliver.ts';
import type { ChannelDoc } from '../src/store/channels.store.ts';
import { startWorkers } from '../workers/main.ts';
import { boundProject, call, eventId, startTestContext, type TestContext } from './helpers/context.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { until } from './helpers/until.ts';

const mails: { to: string; raw: string }[] = [];
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  onData(stream, session, done) {
    let raw = '';
    stream.on('data', (d) => (raw += d));
    stream.on('end', () => {
      mails.push({ to: session.envelope.rcptTo.map((r) => r.address).join(','), raw });
      done();
    });
  },
});

let ctx: TestContext;
let workers: Awaited<ReturnType<typeof startWorkers>>;
let receiver: Receiver;
beforeAll(async () => {
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  ctx = await startTestContext({
    WEBHOOK_ALLOW_PRIVATE: 'true',
    SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    MAIL_FROM: 'Lookout <alerts@lookout.test>',
    PUBLIC_URL: 'https://lookout.example',
    FLUSH_INTERVAL_MS: '100',
  });
  workers = await startWorkers(ctx.runtime, { queues: ['events', 'sessions', 'notifications'] });
  receiver = await startReceiver();
});
afterAll(async () => {
  await workers?.close();
  await ctx?.close();
  await receiver?.close();
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

async function bound() {
  const p = await boundProject(ctx);
  const project = p.id;
  const channel = async (input: Record<string, unknown> = {}) => ctx.runtime.notifications.add(project, { webhook: `${receiver.url}/hook/${project}`, ...input });
  const got = (event: string) => receiver.of(event).filter((r) => r.path === `/hook/${project}`);
  return { ...p, project, channel, got };
}

const error = (type: string, extra: Record<string, unknown> = {}) => ({
  event_id: eventId(),
  timestamp: new Date().toISOString(),
  level: 'error',
  release: '1.0.0',
  environment: 'production',
  exception: { values: [{ type, value: `${type} happened`, stacktrace: { frames: [{ module: 'app.cart', function: 'total', lineno: 10, in_app: true }] } }] },
  ...extra,
});
const attempt = (minutes: number) => ({
  event_id: eventId(),
  timestamp: new Date(Date.now() - 10 * 60_000 + minutes * 1000).toISOString(),
  platform: 'php',
  security: { kind: 'login_failed', actor: 'alice@example.com', ip: '203.0.113.7', user_agent: 'curl/8' },
});
const settle = () => new Promise((resolve) => setTimeout(resolve, 1500));

describe('triggers, each notified once with a valid signature', () => {
  it('issue.created: a new error issue, once, with the body the docs describe', async () => {
    const p = await bound();
    const ch = await p.channel();
    expect(ch.secret).toMatch(/^whsec_/);
    expect((await p.send(error('CartError'))).status).toBe(202);
    await until(() => p.got('issue.created').length === 1);
    await p.send(error('CartError'));
    await settle();
    const [r] = p.got('issue.created');
    expect(p.got('issue.created')).toHaveLength(1);
    expect(r!.headers['content-type']).toBe('application/json');
    expect(receiver.signed(r!, ch.secret!)).toBe(true);
    expect(receiver.signed(r!, 'whsec_other')).toBe(false);
    expect(r!.body).toMatchObject({
      event: 'issue.created',
      delivery: r!.delivery,
      project: { id: String(p.project), name: 'shop' },
      environment: 'production',
      issue: { title: 'CartError: CartError happened', kind: 'error', level: 'error', status: 'unresolved', event_count: 1, last_release: '1.0.0' },
    });
    expect(r!.body.issue.url).toBe(`https://lookout.example/projects/${p.project}/issues/${r!.body.issue.id}`);
    expect(Date.parse(r!.body.triggered_at)).not.toBeNaN();
  });

  it("issue.assigned: an assignment and an unassignment, each once, named in the issue's activity", async () => {
    const p = await bound();
    await p.channel({ on: ['issue.assigned'] });
    expect((await p.send(error('AssignedError'))).status).toBe(202);
    await until(async () => (await p.get('/issues')).body.total === 1);
    const id = Number((await p.get('/issues')).body.issues[0].id);
    await ctx.runtime.issues.assign(p.project, id, 'ana@shop.example', 'bo@shop.example', new Date());
    await ctx.runtime.issues.assign(p.project, id, 'ana@shop.example', 'bo@shop.example', new Date()); // no change: no notification
    await until(() => p.got('issue.assigned').length === 1);
    await ctx.runtime.issues.assign(p.project, id, null, 'bo@shop.example', new Date());
    await until(() => p.got('issue.assigned').length === 2);
    await settle();
    const [assigned, unassigned] = p.got('issue.assigned');
    expect(p.got('issue.assigned')).toHaveLength(2);
    expect(assigned!.body).toMatchObject({ event: 'issue.assigned', assignee: 'ana@shop.example', by: 'bo@shop.example', issue: { id: String(id), title: 'AssignedError: AssignedError happened' } });
    expect(unassigned!.body).toMatchObject({ assignee: null });
    const activity = (await ctx.runtime.issues.activity(p.project, id)).activity;
    await until(async () => (await ctx.runtime.issues.activity(p.project, id)).activity.filter((a) => a.kind === 'notified').length === 2);
    expect(activity.filter((a) => a.kind === 'assigned')).toHaveLength(2);
  });

  it('issue.regressed: a resolved issue that receives an event, once per regression', async () => {
    const p = await bound();
    const ch = await p.channel({ on: ['issue.regressed'] });
    await p.send(error('RegressError'));
    await until(async () => (await p.v1('GET', '/issues')).body.issues.length === 1);
    const id = (await p.v1('GET', '/issues')).body.issues[0].id;
    expect((await p.v1('POST', `/issues/${id}/status`, { status: 'resolved' })).status).toBe(200);
    await p.send(error('RegressError', { release: '1.0.1' }));
    await p.send(error('RegressError', { release: '1.0.1' }));
    await until(() => p.got('issue.regressed').length === 1);
    await settle();
    expect(p.got('issue.regressed')).toHaveLength(1);
    expect(receiver.signed(p.got('issue.regressed')[0]!, ch.secret!)).toBe(true);
    expect(p.got('issue.regressed')[0]!.body).toMatchObject({ event: 'issue.regressed', release: '1.0.1', regression_kind: 'new_release', issue: { id, status: 'unresolved' } });
    expect(p.got('issue.created')).toHaveLength(0);
  });

  it('security.burst: a burst raising a security issue names the actor, the address and the attempts', async () => {
    const p = await bound();
    const ch = await p.channel();
    for (let i = 0; i < 5; i++) expect((await p.send(attempt(i))).status).toBe(202);
    await until(() => p.got('security.burst').length === 1);
    for (let i = 5; i < 8; i++) await p.send(attempt(i));
    await settle();
    const bursts = p.got('security.burst');
    expect(bursts).toHaveLength(1);
    expect(receiver.signed(bursts[0]!, ch.secret!)).toBe(true);
    expect(bursts[0]!.body).toMatchObject({ event: 'security.burst', actor: 'alice@example.com', ip: '203.0.113.7', attempts: 5, detector: 'brute_force', issue: { kind: 'security' } });
  });

  it('decision.created: the decision a burst makes, once; its growth extends it without another', async () => {
    const p = await bound();
    await p.channel({ on: ['decision.created'] });
    for (let i = 0; i < 5; i++) expect((await p.send(attempt(i))).status).toBe(202);
    await until(() => p.got('decision.created').length === 1);
    for (let i = 5; i < 8; i++) await p.send(attempt(i));
    await settle();
    const made = p.got('decision.created');
    expect(made).toHaveLength(1);
    expect(made[0]!.body).toMatchObject({ event: 'decision.created', type: 'ban', ip: '203.0.113.7', actor: 'alice@example.com', escalation: 0, detector: 'brute_force', issue: { kind: 'security' } });
    expect(Date.parse(made[0]!.body.until as string) - Date.parse(made[0]!.body.triggered_at as string)).toBe(3600_000);
  });

  it('issue.frequency: more than N events in M minutes, once per issue per interval', async () => {
    const p = await bound();
    const ch = await p.channel({ on: ['issue.frequency'], frequency: { count: 3, minutes: 5 } });
    for (let i = 0; i < 3; i++) await p.send(error('BusyError'));
    await settle();
    expect(p.got('issue.frequency')).toHaveLength(0);
    await p.send(error('BusyError'));
    await until(() => p.got('issue.frequency').length === 1);
    for (let i = 0; i < 3; i++) await p.send(error('BusyError'));
    await settle();
    expect(p.got('issue.frequency')).toHaveLength(1);
    expect(receiver.signed(p.got('issue.frequency')[0]!, ch.secret!)).toBe(true);
    expect(p.got('issue.frequency')[0]!.body).toMatchObject({ event: 'issue.frequency', events: 4, minutes: 5, threshold: 3, issue: { title: 'BusyError: BusyError happened' } });
  });

  it("release.crash_free: the hour's crash-free sessions rate below X % with at least K sessions, once", async () => {
    const p = await bound();
    const ch = await p.channel({ on: ['release.crash_free'], crash_free: { threshold: 90, min_sessions: 10 } });
    const sessions = (body: unknown) => call(ctx, 'POST', '/api/v1/sessions', { key: p.publicKey, body });
    const started = new Date().toISOString();
    expect((await sessions({ release: '2.0.0', environment: 'production', aggregates: [{ started, exited: 8, crashed: 1 }] })).status).toBe(202);
    await settle();
    expect(p.got('release.crash_free')).toHaveLength(0); // 9 sessions: under K
    await sessions({ release: '2.0.0', environment: 'production', aggregates: [{ started, exited: 1, crashed: 1 }] });
    await until(() => p.got('release.crash_free').length === 1);
    await sessions({ release: '2.0.0', environment: 'production', aggregates: [{ started, crashed: 1 }] });
    await settle();
    expect(p.got('release.crash_free')).toHaveLength(1);
    expect(receiver.signed(p.got('release.crash_free')[0]!, ch.secret!)).toBe(true);
    expect(p.got('release.crash_free')[0]!.body).toMatchObject({ event: 'release.crash_free', release: '2.0.0', environment: 'production', rate: 81.81, threshold: 90, sessions: 11, crashed: 2 });
  });

  it('filters: a channel for another environment or a more severe level hears nothing', async () => {
    const p = await bound();
    await p.channel({ environment: 'staging' });
    await ctx.runtime.notifications.add(p.project, { webhook: `${receiver.url}/hook/${p.project}`, level: 'fatal' });
    await p.send(error('FilteredError'));
    await p.send(error('FatalStaging', { level: 'fatal', environment: 'staging' }));
    await until(() => p.got('issue.created').length >= 2);
    await settle();
    // one per delivery (a retry of a slow answer brings the same delivery id again, which receivers drop)
    const deliveries = new Map(p.got('issue.created').map((r) => [r.delivery, r.body.issue.title]));
    expect([...deliveries.values()].sort()).toEqual(['FatalStaging: FatalStaging happened', 'FatalStaging: FatalStaging happened']);
  });
});

describe('delivery', () => {
  it('a receiver failing three times gets the same delivery id four times, and the log shows each attempt', async () => {
    const p = await bound();
    const path = `/hook/${p.project}`;
    let failures = 0;
    receiver.answer((_n, r) => (r.path === path && failures++ < 3 ? 500 : 200));
    try {
      await p.channel();
      await p.send(error('FlakyError'));
      await until(() => p.got('issue.created').length === 4, 30_000);
    } finally {
      receiver.answer(() => 200);
    }
    const ids = new Set(p.got('issue.created').map((r) => r.delivery));
    expect(ids.size).toBe(1);
    await until(async () => (await ctx.runtime.notifications.deliveries(p.project)).deliveries[0]?.status === 'delivered');
    const [d] = (await ctx.runtime.notifications.deliveries(p.project)).deliveries;
    expect(d).toMatchObject({ id: [...ids][0], event: 'issue.created', status: 'delivered', attempts: 4, last_status: 200, last_error: null });
    expect(d!.attempts_log.map((a) => a.status)).toEqual([500, 500, 500, 200]);
    expect(d!.attempts_log[0]).toMatchObject({ error: 'HTTP 500', answer: expect.stringMatching(/^refused/) });
    const attempts = (await ctx.runtime.metrics.notifications.get()).values;
    expect(attempts.filter((v) => v.labels.outcome === 'retrying').reduce((n, v) => n + v.value, 0)).toBeGreaterThanOrEqual(3);
  });

  it('a Slack-format channel gets text and blocks with the link', async () => {
    const p = await bound();
    await p.channel({ format: 'slack' });
    await p.send(error('SlackError'));
    await until(() => p.got('issue.created').length === 1);
    const { body } = p.got('issue.created')[0]!;
    expect(body.text).toMatch(/^\[shop\] New issue: SlackError: SlackError happened <https:\/\/lookout\.example\/projects\/\d+\/issues\/\d+\|Open in Lookout>$/);
    expect(body.blocks[0]).toMatchObject({ type: 'section', text: { type: 'mrkdwn', text: expect.stringContaining('New issue: SlackError') } });
  });

  it('ten deliveries failing their last attempt in a row pause the channel; later triggers are logged as paused, not sent', async () => {
    const p = await bound();
    const path = `/hook/${p.project}`;
    receiver.answer((_n, r) => (r.path === path ? 503 : 200));
    try {
      const ch = await p.channel();
      // Each run below is a delivery's last attempt (the job's attempts are used up), as after 2 h of retries.
      const lastAttempt = { attemptsMade: 12, opts: { attempts: 13 } } as Job;
      for (let i = 0; i < 10; i++) {
        const delivery = `n${p.project}-t${ch.id}-${i}`;
        const body = { event: 'test' as const, delivery, triggered_at: new Date().toISOString(), project: { id: String(p.project), name: 'shop' } };
        await ctx.runtime.notify.openDelivery(p.project, { id: delivery, channel: Number(ch.id), event: 'issue.created', status: 'queued' }, new Date());
        await expect(deliverNotification({ project: p.project, channel: Number(ch.id), delivery, event: 'issue.created', body: { ...body, event: 'issue.created' } }, ctx.runtime, lastAttempt)).rejects.toThrow('HTTP 503');
      }
      expect((await ctx.runtime.notifications.list(p.project)).channels[0]).toMatchObject({ paused: true, paused_at: expect.any(String) });
      expect((await ctx.runtime.notifications.deliveries(p.project)).deliveries.every((d) => d.status === 'failed')).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 1100)); // the workers' channel cache
      await p.send(error('WhilePaused'));
      await until(async () => (await ctx.runtime.notifications.deliveries(p.project)).deliveries.some((d) => d.status === 'paused'));
      expect(p.got('issue.created')).toHaveLength(10);
      expect((await ctx.runtime.notifications.resume(p.project, Number(ch.id))).paused).toBe(false);
    } finally {
      receiver.answer(() => 200);
    }
  });

  it('an email channel receives the issue with its title in the subject', async () => {
    const p = await bound();
    await ctx.runtime.notifications.add(p.project, { email: 'owner@shop.example' });
    await p.send(error('MailedError'));
    await until(() => mails.some((m) => m.to === 'owner@shop.example'));
    const mail = mails.find((m) => m.to === 'owner@shop.example')!;
    expect(mail.raw).toMatch(/Subject: \[Lookout\] shop: New issue: MailedError: MailedError happened/);
    expect(mail.raw).toContain('https://lookout.example/projects/');
    expect(mail.raw).toMatch(/Content-Type: text\/html/);
  });

  it('`notify test` sends a test notification, and a removed channel hears nothing more', async () => {
    const p = await bound();
    const ch = await p.channel();
    const { delivery } = await ctx.runtime.notifications.test(p.project, Number(ch.id));
    await until(() => p.got('test').length === 1);
    expect(p.got('test')[0]!.delivery).toBe(delivery);
    await ctx.runtime.notifications.remove(p.project, Number(ch.id));
    await new Promise((resolve) => setTimeout(resolve, 1100)); // the workers' channel cache
    await p.send(error('UnheardError'));
    await settle();
    expect(p.got('issue.created')).toHaveLength(0);
  });
});

describe('outbound safety', () => {
  it.each([
    ['loopback', 'http://127.0.0.1:9/hook', 'loopback'],
    ['loopback by name', 'http://localhost:9/hook', 'loopback'],
    ['private', 'http://10.0.0.5/hook', 'private'],
    ['link-local (cloud metadata)', 'http://169.254.169.254/latest/meta-data', 'link-local'],
    ['IPv6 loopback', 'http://[::1]/hook', 'loopback'],
    ['IPv4-mapped IPv6', 'http://[::ffff:192.168.1.1]/hook', 'private'],
  ])('refuses a %s target at delivery without WEBHOOK_ALLOW_PRIVATE', async (_what, url, rule) => {
    const channel = { kind: 'webhook', url, format: 'json', secret: 'whsec_x' } as ChannelDoc;
    const body = { event: 'test' as const, delivery: 'd1', triggered_at: new Date().toISOString(), project: { id: '1', name: 'p' } };
    const outcome = await sendNotice(channel, body, { publicUrl: 'https://l.example', allowPrivate: false, smtpUrl: null, mailFrom: 'x@y' });
    expect(outcome).toMatchObject({ ok: false, refused: true, status: null });
    expect(outcome.error).toContain(`refused (${rule})`);
  });

  it('refuses file: URLs and credentials in the URL, and email without SMTP_URL', async () => {
    const send = (url: string) =>
      sendNotice({ kind: 'webhook', url, format: 'json', secret: 's' } as ChannelDoc, { event: 'test', delivery: 'd', triggered_at: '', project: { id: '1', name: 'p' } }, { publicUrl: '', allowPrivate: true, smtpUrl: null, mailFrom: '' });
    expect((await send('file:///etc/passwd')).error).toContain('refused (scheme)');
    expect((await send('https://user:pw@example.com/')).error).toContain('refused (credentials)');
  });
});
