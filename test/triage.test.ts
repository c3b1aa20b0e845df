/**
 * Triage over HTTP (issue 50), against the real API, workers, Redis and FerretDB: every search term filters the
 * issue list (release and environment by the same events, with those events counted), users affected and first
 * release, tag values, assignment, comments rendered safely, the activity log, bulk changes, resolve in the next
 * release and ignore until more events.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { boundProject, call, drained, eventId, sessionCookie, type TestContext } from './helpers/context.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['events'], (c) => (ctx = c));

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0';

const error = (type: string, extra: Record<string, unknown> = {}) => ({
  event_id: eventId(),
  timestamp: new Date().toISOString(),
  level: 'error',
  exception: { values: [{ type, value: `${type} happened`, stacktrace: { frames: [{ module: `app.${type.toLowerCase()}`, function: 'run', lineno: 10, in_app: true }] } }] },
  ...extra,
});

type Project = Awaited<ReturnType<typeof boundProject>>;
let p: Project;
let dash: (method: string, path: string, body?: unknown) => ReturnType<typeof call>;
const OWNER = { email: 'ana@triage.example', password: 'ana password one' };
const MEMBER = { email: 'bo@triage.example', password: 'bo password one' };

beforeAll(async () => {
  p = await boundProject(ctx);
  const org = Number(p.org.id);
  await ctx.runtime.accounts.addUser({ org, ...OWNER, role: 'owner' });
  await ctx.runtime.accounts.addUser({ org, ...MEMBER, role: 'member' });
  const res = await call(ctx, 'POST', '/api/dashboard/session', { body: OWNER });
  const cookie = sessionCookie(res);
  const csrf = res.body.csrf_token as string;
  dash = (method, path, body) =>
    call(ctx, method, `/api/dashboard/projects/${p.id}${path}`, { body, headers: { cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': csrf }) } });

  const h = 3_600_000;
  const at = (ago: number) => new Date(Date.now() - ago).toISOString();
  // Alpha: erp@1 in production and erp@2 in staging only; two users; Chrome
  for (const [release, environment, user, ago] of [
    ['erp@1', 'production', { id: 'u1', email: 'Carla@Shop.example' }, 30 * h],
    ['erp@2', 'staging', { id: 'u2' }, 2 * h],
    ['erp@2', 'staging', { id: 'u2' }, 1 * h],
  ] as const) {
    await p.send(error('AlphaError', { release, environment, user, timestamp: at(ago), request: { url: 'https://shop.example/cart', headers: { 'User-Agent': CHROME } } }));
  }
  // Beta: erp@2 in production, no user, Firefox, a tag of its own
  for (let i = 0; i < 3; i++) {
    await p.send(error('BetaError', { release: 'erp@2', environment: 'production', timestamp: at(10 * 60_000), tags: { 'page.kind': 'checkout' }, request: { headers: { 'User-Agent': FIREFOX } } }));
  }
  await drained(ctx);
}, 120_000);

const types = async (search: string) => {
  const res = await dash('GET', `/issues?search=${encodeURIComponent(search)}&order=first_seen`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.issues as { exception_type: string }[]).map((i) => i.exception_type).sort();
};
const issueId = async (type: string) =>
  ((await dash('GET', `/issues?search=${encodeURIComponent(type)}&status=unresolved`)).body.issues as { id: string }[])[0]?.id ??
  ((await dash('GET', `/issues?search=${encodeURIComponent(`${type} is:resolved`)}`)).body.issues as { id: string }[])[0]!.id;

describe('the issue list searched', () => {
  it.each([
    ['release:erp@1', ['AlphaError']],
    ['release:erp@2', ['AlphaError', 'BetaError']],
    ['!release:erp@1', ['BetaError']],
    // the same events: Alpha's erp@2 events were all in staging
    ['release:erp@2 environment:production', ['BetaError']],
    ['release:erp@2 environment:staging', ['AlphaError']],
    ['first-release:erp@1', ['AlphaError']],
    ['first-release:erp@2', ['BetaError']],
    ['user.id:u2', ['AlphaError']],
    ['user.email:carla@shop.example', ['AlphaError']],
    ['has:user', ['AlphaError']],
    ['!has:user', ['BetaError']],
    ['browser:"Chrome 120"', ['AlphaError']],
    ['browser.name:Firefox', ['BetaError']],
    ['os.name:Linux', ['BetaError']],
    ['page.kind:checkout', ['BetaError']],
    ['age:-24h', ['BetaError']],
    ['age:+24h', ['AlphaError']],
    ['last-seen:-30m', ['BetaError']],
    ['times-seen:>2', ['AlphaError', 'BetaError']],
    ['times-seen:3', ['AlphaError', 'BetaError']],
    ['times-seen:<3', []],
    ['level:error "happened"', ['AlphaError', 'BetaError']],
    ['AlphaError', ['AlphaError']],
    ['is:unassigned', ['AlphaError', 'BetaError']],
    ['is:regressed', []],
  ])('%s', async (search, expected) => {
    expect(await types(search)).toEqual(expected);
  });

  it('counts the events of the release and environment asked, and names what it cannot apply', async () => {
    const list = (await dash('GET', `/issues?search=${encodeURIComponent('release:erp@2 environment:staging has:company is:open')}`)).body;
    expect(list.issues).toHaveLength(1);
    expect(list.issues[0]).toMatchObject({ exception_type: 'AlphaError', event_count: 3, matching_events: 2, users: 2, first_release: 'erp@1' });
    expect(list.search.unknown.map((u: { term: string }) => u.term)).toEqual(['is:open', 'has:company']);
    expect((await dash('GET', `/issues?release=erp@1`)).body.issues[0]).toMatchObject({ matching_events: 1 });
    expect((await dash('GET', `/issues`)).body.issues[0].matching_events).toBeNull();
  });

  it.each([
    ['the key API', (q: string) => p.get(`/issues?query=${encodeURIComponent(q)}`)],
    ['the dashboard API', (q: string) => dash('GET', `/issues?query=${encodeURIComponent(q)}`)],
  ])("query= reads Sentry's syntax, as every Sentry tool sends it, on %s", async (_, list) => {
    const found = async (q: string) => ((await list(q)).body.issues as { exception_type: string }[]).map((i) => i.exception_type).sort();
    expect(await found('release:erp@2 environment:staging')).toEqual(['AlphaError']);
    expect(await found('times-seen:>2')).toEqual(['AlphaError', 'BetaError']);
    expect(await found('times-seen:>4')).toEqual([]);
    expect(await found('user.id:u2')).toEqual(['AlphaError']);
    expect(await found('is:unresolved')).toEqual(['AlphaError', 'BetaError']);
    expect(await found('"BetaError happened"')).toEqual(['BetaError']);
    // a phrase matches as a phrase: the same words in another order do not
    expect(await found('"happened BetaError"')).toEqual([]);
    expect(await found('happened BetaError')).toEqual(['BetaError']);
    expect(await found('')).toEqual(['AlphaError', 'BetaError']);
    const unknown = (await list('is:sparkling BetaError')).body;
    expect(unknown.search.unknown.map((u: { term: string }) => u.term)).toEqual(['is:sparkling']);
    expect(unknown.issues.map((i: { exception_type: string }) => i.exception_type)).toEqual(['BetaError']);
  });

  it("shows an issue's users, first release and tag values", async () => {
    const issue = (await dash('GET', `/issues/${await issueId('AlphaError')}`)).body;
    expect(issue).toMatchObject({ users: 2, first_release: 'erp@1', last_release: 'erp@2', regressed: false, assignee: null });
    const tags = Object.fromEntries((issue.spread.tags as { key: string; values: { value: string; count: number }[] }[]).map((t) => [t.key, t.values]));
    expect(tags['browser']).toEqual([{ value: 'Chrome 120', count: 3 }]);
    expect(tags['os']).toEqual([{ value: 'Windows 10', count: 3 }]);
  });

  it('finds the same after a rebuild of the Redis state from MongoDB (users, tags, first release, release and environment)', async () => {
    const before = await Promise.all(['user.email:carla@shop.example', 'browser.name:Firefox', 'first-release:erp@1', 'release:erp@2 environment:staging'].map(types));
    await ctx.runtime.keeper.rebuild(p.id, new Date());
    // the flusher takes every issue into the list indexes again
    await expect.poll(async () => (await dash('GET', '/issues')).body.total, { timeout: 10_000 }).toBe(2);
    expect(await Promise.all(['user.email:carla@shop.example', 'browser.name:Firefox', 'first-release:erp@1', 'release:erp@2 environment:staging'].map(types))).toEqual(before);
    expect((await dash('GET', `/issues/${await issueId('AlphaError')}`)).body).toMatchObject({ users: 2, first_release: 'erp@1' });
  });
});

describe('workflow', () => {
  it('assigns to a member and back to no one, found by assigned:, and logged in the activity', async () => {
    const id = await issueId('BetaError');
    expect((await dash('PUT', `/issues/${id}/assignee`, { assignee: 'BO@triage.example' })).body).toEqual({ ok: true, assignee: MEMBER.email });
    expect((await dash('PUT', `/issues/${id}/assignee`, { assignee: 'stranger@else.example' })).status).toBe(404);
    expect(await types(`assigned:${MEMBER.email}`)).toEqual(['BetaError']);
    expect(await types('is:assigned')).toEqual(['BetaError']);
    expect(await types('assigned:me')).toEqual([]);
    expect((await dash('GET', `/issues/${id}`)).body.assignee).toBe(MEMBER.email);
    await dash('PUT', `/issues/${id}/assignee`, { assignee: null });
    expect(await types('is:assigned')).toEqual([]);
    const activity = (await dash('GET', `/issues/${id}/activity`)).body.activity as { kind: string; by: string; data: Record<string, unknown> }[];
    expect(activity.map((a) => [a.kind, a.data.assignee ?? null])).toEqual([
      ['assigned', null],
      ['assigned', MEMBER.email],
      ['first_seen', null],
    ]);
    expect(activity[0]!.by).toBe(OWNER.email);
  });

  it('keeps comments as Markdown, shown as HTML with raw HTML escaped', async () => {
    const id = await issueId('BetaError');
    const added = await dash('POST', `/issues/${id}/comments`, { text: 'Seen on **checkout**. <img src=x onerror=alert(1)> [x](javascript:alert(1))' });
    expect(added.status).toBe(201);
    expect(added.body.data.html).toBe('<p>Seen on <strong>checkout</strong>. &lt;img src=x onerror=alert(1)&gt; [x](javascript:alert(1))</p>\n');
    expect((await dash('POST', `/issues/${id}/comments`, { text: '   ' })).status).toBe(400);
    const activity = (await dash('GET', `/issues/${id}/activity`)).body.activity as { kind: string }[];
    expect(activity[0]).toMatchObject({ kind: 'comment', by: OWNER.email });
  });

  it('resolves, ignores and reopens many issues at once; an unknown id is named', async () => {
    const ids = [await issueId('AlphaError'), await issueId('BetaError')];
    const res = await dash('POST', '/issues/bulk', { ids: [...ids, '999999'], status: { status: 'ignored' } });
    expect(res.body).toEqual({ ok: true, changed: 2, not_found: ['999999'] });
    expect(await types('is:ignored')).toEqual(['AlphaError', 'BetaError']);
    await dash('POST', '/issues/bulk', { ids, status: { status: 'unresolved' }, assignee: OWNER.email });
    expect(await types('assigned:me')).toEqual(['AlphaError', 'BetaError']);
    expect((await dash('POST', '/issues/bulk', { ids })).status).toBe(400);
  });

  it('resolved in the next release: an event of the same release does not regress it, one of a newer release does', async () => {
    const id = await issueId('AlphaError');
    expect((await dash('POST', `/issues/${id}/status`, { status: 'resolved', in_next_release: true })).status).toBe(200);
    const resolved = (await dash('GET', `/issues/${id}`)).body;
    expect(resolved).toMatchObject({ status: 'resolved', resolved_in_next_release: true, resolved_release: 'erp@2' });
    // erp@1 and erp@2 are not newer than erp@2
    await p.send(error('AlphaError', { release: 'erp@2', environment: 'production' }));
    await p.send(error('AlphaError', { release: 'erp@1', environment: 'production' }));
    await drained(ctx);
    expect((await dash('GET', `/issues/${id}`)).body).toMatchObject({ status: 'resolved', event_count: 5 });
    await p.send(error('AlphaError', { release: 'erp@3', environment: 'production' }));
    await drained(ctx);
    const regressed = (await dash('GET', `/issues/${id}`)).body;
    expect(regressed).toMatchObject({ status: 'unresolved', regressed: true, regression_count: 1, last_regression_kind: 'new_release' });
    expect(await types('is:regressed')).toEqual(['AlphaError']);
    const activity = (await dash('GET', `/issues/${id}/activity`)).body.activity as { kind: string; data: Record<string, unknown> }[];
    expect(activity[0]).toMatchObject({ kind: 'regressed', data: { release: 'erp@3' } });
    expect(activity[1]).toMatchObject({ kind: 'status', data: { status: 'resolved', in_next_release: true } });
    expect((await dash('POST', `/issues/${id}/status`, { status: 'ignored', in_next_release: true })).status).toBe(400);
  });

  it('ignored until two more events: unresolved again by the second', async () => {
    const id = await issueId('BetaError');
    expect((await dash('POST', `/issues/${id}/status`, { status: 'ignored', until_count: 2 })).status).toBe(200);
    expect((await dash('GET', `/issues/${id}`)).body).toMatchObject({ status: 'ignored', ignore_until_count: 5 });
    await p.send(error('BetaError', { release: 'erp@2', environment: 'production' }));
    await drained(ctx);
    expect((await dash('GET', `/issues/${id}`)).body.status).toBe('ignored');
    await p.send(error('BetaError', { release: 'erp@2', environment: 'production' }));
    await drained(ctx);
    expect((await dash('GET', `/issues/${id}`)).body).toMatchObject({ status: 'unresolved', ignore_until_count: null });
    const activity = (await dash('GET', `/issues/${id}/activity`)).body.activity as { kind: string }[];
    expect(activity[0]).toMatchObject({ kind: 'unignored' });
    expect((await dash('POST', `/issues/${id}/status`, { status: 'ignored', until: new Date(Date.now() - 1000).toISOString() })).status).toBe(400);
  });

  it('a security issue follows the same rule: resolved in the next release, the attack regresses it once a newer release is out; ignored until more attempts, the attack ends the ignore', async () => {
    const start = Date.now() - 60_000;
    let n = 0;
    const attempts = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const security = { kind: 'login_failed', actor: 'mallory', ip: '198.51.100.7' };
        expect((await p.send({ event_id: eventId(), timestamp: new Date(start + n++ * 1000).toISOString(), security })).status).toBe(202);
      }
      await drained(ctx);
    };
    const issue = async () => (await dash('GET', `/issues/${id}`)).body;
    const activity = async () => (await dash('GET', `/issues/${id}/activity`)).body.activity as { kind: string; data: Record<string, unknown> }[];
    await attempts(5);
    const id = (await p.get('/issues?kind=security')).body.issues[0].id as string;
    expect((await dash('POST', `/issues/${id}/status`, { status: 'resolved', in_next_release: true })).status).toBe(200);
    // the attack goes on, but the next release is not out: still resolved
    await attempts(2);
    expect(await issue()).toMatchObject({ status: 'resolved', event_count: 7, regression_count: 0 });
    // a newer release's first event, then one more attempt: regressed, in the activity
    await p.send(error('AlphaError', { release: 'erp@9', environment: 'production' }));
    await drained(ctx);
    await attempts(1);
    expect(await issue()).toMatchObject({ status: 'unresolved', event_count: 8, regression_count: 1, last_regression_kind: 'new_release' });
    expect((await activity())[0]).toMatchObject({ kind: 'regressed' });

    expect((await dash('POST', `/issues/${id}/status`, { status: 'ignored', until_count: 2 })).status).toBe(200);
    await attempts(1);
    expect(await issue()).toMatchObject({ status: 'ignored', event_count: 9 });
    await attempts(1);
    expect(await issue()).toMatchObject({ status: 'unresolved', event_count: 10, ignore_until_count: null });
    expect((await activity())[0]).toMatchObject({ kind: 'unignored', data: { event_count: 10 } });
  });
});
