/**
 * Client text in keys (issue 53), through the real ingest path: sign-in
 * attempts, error events and sessions posted to the API, applied by real
 * workers on Redis and FerretDB, read back from the issues, decisions and
 * releases an installation reads, and from the webhooks a real receiver
 * gets. Every string a client sends may hold the separators keys were joined
 * with (`|`, `:`, braces, a line break, NUL, a line separator): what is shown
 * must be what was sent, and a decision must name the address the attempts
 * came from.
 */
import { describe, expect, it } from 'vitest';
import { boundProject, call, drained, eventId, storedEvents, type TestContext } from './helpers/context.ts';
import { withReceiver, type Receiver } from './helpers/receiver.ts';
import { until } from './helpers/until.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
let receiver: Receiver;
withWorkers(['events', 'sessions', 'notifications'], (c) => (ctx = c), { WEBHOOK_ALLOW_PRIVATE: 'true', FLUSH_INTERVAL_MS: '100' });
withReceiver((r) => (receiver = r));

interface Decision {
  id: string;
  kind: string;
  actor?: string;
  ip: string;
  issue_id: string;
}

/** A bound project with a webhook channel for every trigger (crash-free below 99 % from one session). */
async function project() {
  const p = await boundProject(ctx);
  await ctx.runtime.notifications.add(p.id, {
    webhook: `${receiver.url}/hook/${p.id}`,
    on: ['issue.created', 'security.burst', 'release.crash_free'],
    crash_free: { threshold: 99, min_sessions: 1 },
  });
  let tick = 0;
  const attempt = (actor: string, ip: string, extra: Record<string, unknown> = {}) =>
    p.send({
      event_id: eventId(),
      timestamp: new Date(Date.now() - 120_000 + tick++ * 100).toISOString(),
      security: { kind: 'login_failed', actor, ip, ...extra },
    });
  const decisions = async () => {
    const res = await p.get('/sdk/decisions');
    expect(res.status).toBe(200);
    return res.body.decisions as Decision[];
  };
  const got = (event: string) => receiver.of(event).filter((r) => r.path === `/hook/${p.id}`);
  const issues = async (query: Record<string, string>) => {
    const res = await p.get(`/issues?${new URLSearchParams(query)}`);
    expect(res.status, res.text).toBe(200);
    return res.body.issues as { id: string; title: string; kind: string; companies: string[]; last_release: string | null }[];
  };
  return { ...p, attempt, decisions, got, issues };
}

describe('a sign-in actor holding a separator', () => {
  it('the attack of the issue: actor `victim|203.0.113.99` from 198.51.100.7 blocks 198.51.100.7, never 203.0.113.99', async () => {
    const p = await project();
    for (let i = 0; i < 12; i++) expect((await p.attempt('victim|203.0.113.99', '198.51.100.7')).status).toBe(202);
    await until(async () => (await p.decisions()).length > 0 && p.got('security.burst').length > 0);
    await drained(ctx);
    const decisions = await p.decisions();
    expect(decisions).toEqual([expect.objectContaining({ kind: 'brute_force', actor: 'victim|203.0.113.99', ip: '198.51.100.7' })]);
    expect(decisions.some((d) => d.ip === '203.0.113.99')).toBe(false);
    const [issue] = await p.issues({ kind: 'security' });
    expect(issue!.title).toBe('Repeated failed sign-ins for victim|203.0.113.99 from 198.51.100.7');
    const [burst] = p.got('security.burst');
    expect(burst!.body).toMatchObject({ actor: 'victim|203.0.113.99', ip: '198.51.100.7', detector: 'brute_force' });
  });
});

/** Each separator a key was ever joined with, and the line separator a regular expression's `.` stops at. */
const SEPARATORS = ['|', ':', '{', '}', '\n', '\0', '\u2028'];

describe.each(SEPARATORS.map((s) => [JSON.stringify(s), s]))('client text holding %s', (_, s) => {
  // Two of everything, such that joining the parts with the separator makes the same text for both.
  const actors = [`a${s}b`, `a`];
  const agents = [`ua${s}1`, `ua`];
  const releases = [`1.0${s}x`, '1.0'];
  const environments = ['prod', `x${s}prod`];
  const companies = [`acme${s}1`, `acme`];
  const tags = [`v${s}w`, 'v'];

  it('bursts, decisions and notifications name each actor and address as sent', async () => {
    const p = await project();
    const ips = ['198.51.100.21', '198.51.100.22'];
    for (const i of [0, 1]) {
      for (let n = 0; n < 6; n++) expect((await p.attempt(actors[i]!, ips[i]!, { user_agent: agents[i]! })).status).toBe(202);
    }
    await until(async () => (await p.decisions()).length === 2 && p.got('security.burst').length === 2);
    await drained(ctx);
    const decisions = await p.decisions();
    expect(decisions.map((d) => [d.actor, d.ip]).sort()).toEqual([[actors[0], ips[0]], [actors[1], ips[1]]].sort());
    expect(new Set(decisions.map((d) => d.issue_id)).size).toBe(2);
    const security = await p.issues({ kind: 'security' });
    expect(security.map((i) => i.title).sort()).toEqual(actors.map((a, i) => `Repeated failed sign-ins for ${a} from ${ips[i]}`).sort());
    expect(p.got('security.burst').map((b) => [b.body.actor, b.body.ip]).sort()).toEqual([[actors[0], ips[0]], [actors[1], ips[1]]].sort());
    // the attempts are stored as sent: the issue's latest event carries its user agent
    for (const d of decisions) {
      const res = await p.get(`/issues/${d.issue_id}`);
      expect(res.body.latest_event.security).toMatchObject({ actor: d.actor, ip: d.ip, user_agent: agents[actors.indexOf(d.actor!)] });
    }
  });

  it('issue filters, spreads and companies hold each release, environment, company and tag as sent', async () => {
    const p = await project();
    for (const i of [0, 1]) {
      const res = await p.send({
        event_id: eventId(),
        timestamp: new Date().toISOString(),
        release: releases[i],
        environment: environments[i],
        tags: { company: companies[i], other: tags[i] },
        exception: { values: [{ type: `Err${i}`, value: 'boom' }] },
      });
      expect(res.status).toBe(202);
    }
    await until(async () => (await p.issues({ kind: 'error' })).length === 2);
    await drained(ctx);
    const all = await p.issues({ kind: 'error' });
    const idOf = (i: number) => all.find((x) => x.title.startsWith(`Err${i}`))!.id;
    for (const i of [0, 1]) {
      for (const query of [{ release: releases[i]! }, { environment: environments[i]! }, { company: companies[i]! }] as Record<string, string>[]) {
        expect((await p.issues(query)).map((x) => x.id), JSON.stringify(query)).toEqual([idOf(i)]);
      }
      const res = await p.get(`/issues/${idOf(i)}`);
      expect(res.body.last_release).toBe(releases[i]);
      expect(res.body.companies).toEqual([companies[i]]);
      expect(res.body.spread).toEqual({
        releases: [{ value: releases[i], count: 1 }],
        environments: [{ value: environments[i], count: 1 }],
        companies: [{ value: companies[i], count: 1 }],
        actors: [],
        addresses: [],
        tags: [{ key: 'other', total: 1, values: [{ value: tags[i], count: 1 }] }],
      });
      expect(res.body.latest_event.tags).toEqual({ company: companies[i], other: tags[i] });
    }
    const created = p.got('issue.created').map((n) => n.body.environment).sort();
    expect(created).toEqual([...environments].sort());
  });

  it('session rollups and crash-free notifications keep each release and environment apart', async () => {
    const p = await project();
    const started = new Date().toISOString();
    for (const i of [0, 1]) {
      const res = await call(ctx, 'POST', '/api/v1/sessions', { key: p.publicKey, body: { release: releases[i], environment: environments[i], aggregates: [{ started, exited: 2 + i, crashed: 1 }] } });
      expect(res.status).toBe(202);
    }
    await until(async () => (await p.get('/releases')).body.total === 2 && p.got('release.crash_free').length === 2);
    const rows = (await p.get('/releases')).body.releases as { release: string; environment: string; sessions: { total: number; crashed: number } }[];
    expect(rows.map((r) => [r.release, r.environment, r.sessions.total, r.sessions.crashed]).sort()).toEqual([
      [releases[0], environments[0], 3, 1],
      [releases[1], environments[1], 4, 1],
    ].sort());
    for (const i of [0, 1]) {
      const res = await p.get(`/releases/${encodeURIComponent(releases[i]!)}?${new URLSearchParams({ environment: environments[i]! })}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ release: releases[i], environment: environments[i] });
    }
    expect(p.got('release.crash_free').map((n) => [n.body.release, n.body.environment]).sort()).toEqual([
      [releases[0], environments[0]],
      [releases[1], environments[1]],
    ].sort());
  });
});

describe("a sign-in attempt's address", () => {
  it('is an IP address, written one way: IPv4-mapped IPv6 as IPv4, IPv6 zero-compressed', async () => {
    const p = await project();
    for (let i = 0; i < 3; i++) await p.attempt('ann', '198.51.100.30');
    for (let i = 0; i < 3; i++) await p.attempt('ann', '::ffff:198.51.100.30');
    for (let i = 0; i < 5; i++) await p.attempt('bob', '2001:0DB8:0000:0000:0000:0000:0000:0001');
    await until(async () => (await p.decisions()).length === 2);
    expect((await p.decisions()).map((d) => [d.actor, d.ip]).sort()).toEqual([
      ['ann', '198.51.100.30'],
      ['bob', '2001:db8::1'],
    ]);
  });

  it('anything else is refused with 400 invalid_body naming /security/ip; a long actor is cut to 256 characters and noted', async () => {
    const p = await project();
    for (const ip of ['not-an-ip', '198.51.100.7|203.0.113.99', '203.0.113.99\n', 'fe80::1%eth0', '010.1.1.1', '']) {
      const res = await p.attempt('ann', ip);
      expect(res.status, ip).toBe(400);
      expect(res.body.reason).toBe('invalid_body');
      expect(JSON.stringify(res.body), ip).toContain('/security/ip');
    }
    // 255 characters and an emoji: the cut does not split the emoji's surrogate pair
    const long = `${'x'.repeat(255)}😀tail`;
    expect((await p.attempt(long, '198.51.100.31')).status).toBe(202);
    const [stored] = await storedEvents(ctx, p.id);
    expect(stored!.security).toMatchObject({ actor: 'x'.repeat(255), ip: '198.51.100.31' });
    expect(stored!._meta).toEqual({ '/security/actor': { rem: 'trimmed', len: 261 } });
  });
});

describe('text no script can read', () => {
  it('a lone UTF-16 surrogate in an escape is stored as U+FFFD, and the event is counted', async () => {
    const p = await project();
    const raw = `{"event_id":"${eventId()}","timestamp":"${new Date().toISOString()}","release":"1.0\\ud800","exception":{"values":[{"type":"Lone\\udc00Error","value":"x"}]}}`;
    const res = await call(ctx, 'POST', '/api/v1/events', { key: p.secret, instance: p.instance, raw });
    expect(res.status).toBe(202);
    await until(async () => (await p.issues({ kind: 'error' })).length === 1);
    const [issue] = await p.issues({ release: '1.0\uFFFD' });
    expect(issue!.title).toContain('Lone\uFFFDError');
  });

  it('a title cut at 256 characters never ends in half of an emoji', async () => {
    const p = await project();
    // 'E: ' and 252 characters, then an emoji across the 256th: its first half would stand alone
    const value = `${'x'.repeat(252)}😀 after`;
    expect((await p.send({ event_id: eventId(), timestamp: new Date().toISOString(), exception: { values: [{ type: 'E', value }] } })).status).toBe(202);
    await until(async () => (await p.issues({ kind: 'error' })).length === 1);
    expect((await p.issues({ kind: 'error' }))[0]!.title).toBe(`E: ${'x'.repeat(252)}`);
  });
});
