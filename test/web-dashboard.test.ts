/**
 * The web dashboard in Debian's headless Chromium (playwright-core), against
 * a real Lookout whose data went through the real ingest path (the API and
 * the workers): an owner signs in, creates a project and copies its key, the
 * installation activates with that key and reports sessions, errors and
 * sign-in attempts; the Releases table and chart show the crash-free rates;
 * an issue is resolved and regresses; alerts are previewed and saved; keys
 * rotate; the installation is unbound and another activates; the owner signs
 * out. Every page passes axe-core with no serious or critical violation.
 *
 * Screenshots land in test-results/dashboard/, or in docs/dashboard/ with
 * LOOKOUT_SCREENSHOTS=docs (how the pictures of docs/dashboard.md are made).
 * How long each page took to show is written beside them; nothing is timed
 * against a limit here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkers } from '../workers/main.ts';
import { call, drained, eventId, startTestContext, type TestContext } from './helpers/context.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { accessible as checkAccessible } from './helpers/axe.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const SHOTS = process.env.LOOKOUT_SCREENSHOTS === 'docs' ? path.resolve('docs/dashboard') : path.resolve('test-results/dashboard');
const OWNER = { email: 'owner@acme.example', password: 'owner password for tests' };

let ctx: TestContext;
let workers: Awaited<ReturnType<typeof startWorkers>>;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let org: string;
let receiver: Receiver;
const timings: Record<string, number> = {};

beforeAll(async () => {
  ctx = await startTestContext({ FLUSH_INTERVAL_MS: '200', WEBHOOK_ALLOW_PRIVATE: 'true' });
  workers = await startWorkers(ctx.runtime, { queues: ['sessions', 'events', 'notifications'] });
  receiver = await startReceiver();
  org = (await ctx.runtime.admin.createOrg({ name: 'Acme', plan: 'business', seats: 25 })).id;
  await ctx.runtime.accounts.addUser({ org: Number(org), email: OWNER.email, role: 'owner', password: OWNER.password });
  expect(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (npm test does)`).toBe(true);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ctx.api });
  page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  fs.mkdirSync(SHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  if (Object.keys(timings).length) fs.writeFileSync(path.join(SHOTS, 'timings.json'), `${JSON.stringify(timings, null, 2)}\n`);
  await browser?.close();
  await workers?.close();
  await ctx?.close();
  await receiver?.close();
});

/** Opens a path and waits for its heading; records how long the page took to show it. */
async function open(pathname: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${ctx.api}${pathname}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: 15_000 });
  timings[pathname.replace(/\d+/g, ':id').replace(/\?.*/, '')] = Math.round(await page.evaluate(() => performance.now()));
}

/** axe-core on the page as shown (the dashboard's page unless another is given). */
const accessible = (name: string, on: Page = page) => checkAccessible(name, on);

const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

describe('the web dashboard', () => {
  let project: string;
  let secret: string;
  let publicKey: string;
  const instance = 'inst-web-0001';

  it('sends a visitor without a session to the sign-in page, and refuses a wrong password', async () => {
    await page.goto(`${ctx.api}/projects`);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await accessible('sign-in');
    await shot('sign-in');
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('the email or the password is wrong').waitFor();
  }, 60_000);

  it('signs in, creates a project and copies its secret key', async () => {
    await page.getByLabel('Password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/projects');
    await page.getByLabel('Project name').fill('Shop');
    await page.getByRole('button', { name: 'Create project' }).click();
    const shown = (await page.getByLabel('Secret key', { exact: true }).textContent())!.trim();
    await page.getByRole('button', { name: 'Copy secret key' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    secret = await page.evaluate(() => navigator.clipboard.readText());
    expect(secret).toBe(shown);
    await page.getByRole('link', { name: 'Shop', exact: true }).first().waitFor();
    await accessible('projects');
    await shot('projects');
    const projects = await ctx.runtime.admin.listProjects(Number(org));
    project = projects[0]!.id;
    publicKey = projects[0]!.public_key;
  }, 60_000);

  it('shows the crash-free rates of sessions just sent, in the table and the chart', async () => {
    const activated = await call(ctx, 'POST', '/api/v1/sdk/activate', {
      key: secret,
      body: { instance_id: instance, base_url: 'https://erp.acme.example', platform: 'erp', platform_version: '7.2', terms_version: '2026-01', accepted_by: 'admin@acme.example' },
    });
    expect(activated.status).toBe(200);
    const now = new Date().toISOString();
    // Ten sessions of 1.0.0 by five users: one crashed (user 1) and one errored, so 90% of sessions and 80% of users are crash-free.
    const sessions = Array.from({ length: 10 }, (_, i) => ({
      sid: `sid-web-${i.toString().padStart(4, '0')}`,
      did: `user-${(i % 5) + 1}`,
      release: '1.0.0',
      environment: 'production',
      status: i === 0 ? 'crashed' : i === 1 ? 'errored' : 'exited',
      errors: i <= 1 ? 1 : 0,
      started: now,
    }));
    const sent = await call(ctx, 'POST', '/api/v1/sessions', { key: publicKey, body: { sessions } });
    expect(sent.body).toMatchObject({ accepted: 10, skipped: 0 });
    await drained(ctx);

    await open(`/projects/${project}/releases`, 'Shop: releases');
    const row = page.getByRole('row', { name: /1\.0\.0/ });
    await expect.poll(() => row.textContent()).toContain('90%');
    expect(await row.textContent()).toContain('80%');
    await accessible('releases');
    await shot('releases');

    await row.getByRole('link', { name: '1.0.0' }).click();
    await page.getByRole('heading', { level: 1, name: 'Release 1.0.0' }).waitFor();
    await page.locator('[data-chart="sessions"] canvas').waitFor();
    await page.locator('[data-chart="rates"] canvas').waitFor();
    expect(await page.locator('dl.figures').textContent()).toContain('90%');
    await page.getByText('Hourly figures').click();
    const hour = await page.locator('details tbody tr').last().locator('td').allTextContents();
    expect(hour.slice(1)).toEqual(['8', '1', '0', '1', '90%', '80%']);
    await page.getByRole('link', { name: '7d' }).click();
    await page.waitForURL(/range=7d/);
    await page.locator('[data-chart="sessions"] canvas').waitFor();
    await accessible('release');
    await shot('release');
  }, 90_000);

  it('resolves an issue, and shows its regression when its event comes again', async () => {
    const error = () => ({
      event_id: eventId(),
      timestamp: new Date().toISOString(),
      level: 'error',
      release: '1.0.0',
      tags: { company: 'ACME-42' },
      exception: { values: [{ type: 'TypeError', value: 'total is undefined', stacktrace: { frames: [{ module: 'app.cart', function: 'total', lineno: 10, in_app: true }] } }] },
    });
    const send = (body: unknown) => call(ctx, 'POST', '/api/v1/events', { key: secret, instance, body });
    expect((await send(error())).status).toBe(202);
    // A brute-force burst against one account: a security issue too.
    for (let i = 0; i < 6; i++) {
      const at = new Date(Date.now() - (6 - i) * 1000).toISOString();
      const attempt = { event_id: eventId(), timestamp: at, security: { kind: 'login_failed', actor: 'alice@acme.example', ip: '203.0.113.7', password: 'hunter2-never-stored' } };
      expect((await send(attempt)).status).toBe(202);
    }
    await drained(ctx);

    await open(`/projects/${project}/issues`, 'Issues');
    await page.getByRole('link', { name: /TypeError/ }).waitFor();
    await accessible('issues');
    await shot('issues');
    await page.getByLabel('Kind').selectOption('security');
    await page.waitForURL(/kind=security/);
    await expect.poll(() => page.getByRole('table').textContent()).toContain('security');
    await page.getByLabel('Kind').selectOption('error');
    await page.getByRole('link', { name: /TypeError/ }).click();

    await page.getByRole('button', { name: 'Resolve', exact: true }).click();
    await page.getByRole('button', { name: 'Unresolve' }).waitFor();
    expect(await page.locator('.status').textContent()).toBe('resolved');
    await page.getByRole('button', { name: 'Show raw JSON' }).click();
    expect(await page.getByLabel('The event as stored, as JSON').textContent()).toContain('"TypeError"');

    expect((await send(error())).status).toBe(202);
    await drained(ctx);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: /TypeError/ }).waitFor();
    await expect.poll(() => page.locator('[data-field="regression_count"]').textContent()).toBe('1');
    expect(await page.locator('.status').textContent()).toBe('unresolved');
    await accessible('issue');
    await shot('issue');
  }, 90_000);

  it('shows an event to debug from: source lines, variables, breadcrumbs, request, tags; newer and older events; the list filtered by release and words', async () => {
    const fixture = JSON.parse(fs.readFileSync(new URL('./fixtures/python-event.json', import.meta.url), 'utf8'));
    const send = (body: unknown) => call(ctx, 'POST', '/api/v1/events', { key: secret, instance, body });
    const base = Date.now() - 10 * 60_000;
    const sent = [0, 1, 2].map((i) => ({ ...fixture, event_id: eventId(), timestamp: new Date(base + i * 60_000).toISOString(), release: `shop@2.7.${i}` }));
    for (const e of sent) expect((await send(e)).status).toBe(202);
    await drained(ctx);

    await open(`/projects/${project}/issues`, 'Issues');
    await page.getByRole('searchbox', { name: 'Search' }).fill('release:shop@2.7.1');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/search=release%3Ashop%402\.7\.1/);
    await expect.poll(() => page.getByRole('table').textContent()).toContain('CheckoutError');
    expect(await page.getByRole('table').textContent()).not.toContain('TypeError');
    await page.getByRole('searchbox', { name: 'Search' }).fill('checkout');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/search=checkout/);
    await expect.poll(async () => (await page.getByRole('table').locator('tbody tr').count())).toBe(1);
    expect(await page.getByRole('img', { name: /3 events in the last 24 hours/ }).count()).toBe(1);
    await accessible('issues filtered');
    await page.getByRole('link', { name: /CheckoutError/ }).click();

    await page.getByRole('heading', { level: 1, name: /CheckoutError/ }).waitFor();
    const current = page.locator('ol.source li.current').first();
    await current.waitFor();
    expect(await current.textContent()).toContain('amount = total(cart)');
    const vars = page.getByRole('table', { name: 'Variables of checkout' });
    expect(await vars.getByRole('row', { name: /card_number/ }).textContent()).toContain('[Filtered]');
    expect(await vars.getByRole('row', { name: /^cart/ }).textContent()).toContain('EUR');
    expect(await page.getByRole('table', { name: /What happened before the event/ }).textContent()).toContain('POST /cart/checkout');
    expect(await page.locator('[data-field="request-url"]').textContent()).toBe('POST https://shop.example.com/cart/checkout');
    expect(await page.getByRole('table', { name: 'Tags' }).textContent()).toContain('acme-gmbh');
    expect(await page.getByRole('button', { name: /Show \d+ library frames/ }).count()).toBe(1);
    expect(await page.getByRole('table', { name: 'Events by releases' }).textContent()).toContain('shop@2.7.2');
    await accessible('issue event');
    await shot('issue-event');

    // The newest event is shown first; older and newer ones are a click away, each at its own address.
    expect(await page.locator('.pager').first().textContent()).toContain('1 of 3');
    await page.getByRole('link', { name: 'Older event' }).click();
    await page.waitForURL(new RegExp(`/events/${sent[1]!.event_id}$`));
    await expect.poll(() => page.locator('.pager').first().textContent()).toContain('2 of 3');
    await page.getByRole('link', { name: 'Older event' }).click();
    await page.waitForURL(new RegExp(`/events/${sent[0]!.event_id}$`));
    await page.getByText('Oldest event').waitFor();
    await page.getByRole('link', { name: 'Newer event' }).click();
    await page.waitForURL(new RegExp(`/events/${sent[1]!.event_id}$`));
    await page.reload();
    await expect.poll(() => page.locator('.pager').first().textContent()).toContain('2 of 3');

    await page.getByRole('link', { name: 'All events' }).click();
    await page.getByRole('heading', { level: 1, name: /Events of issue/ }).waitFor();
    await expect.poll(() => page.getByRole('table').locator('tbody tr').count()).toBe(3);
    await accessible('issue events');
    await shot('issue-events');
  }, 90_000);

  it('triages: each search term filters the list (an unknown one named), keys, bulk resolve, assign, comment, resolve in the next release; users and first release shown', async () => {
    const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
    const send = (body: unknown) => call(ctx, 'POST', '/api/v1/events', { key: secret, instance, body });
    const error = (type: string, release: string, extra: Record<string, unknown> = {}) => ({
      event_id: eventId(),
      timestamp: new Date().toISOString(),
      release,
      environment: 'production',
      exception: { values: [{ type, value: 'while triaging', stacktrace: { frames: [{ module: 'shop.triage', function: 'run', lineno: 3, in_app: true }] } }] },
      ...extra,
    });
    const hour = 3_600_000;
    const at = (ago: number) => new Date(Date.now() - ago).toISOString();
    expect((await send(error('TriageError', 'erp@5', { user: { id: 'u1', email: 'carla@shop.example' }, timestamp: at(30 * hour), request: { headers: { 'User-Agent': CHROME } }, tags: { 'page.kind': 'cart' } }))).status).toBe(202);
    expect((await send(error('TriageError', 'erp@6', { user: { id: 'u2' }, environment: 'staging', request: { headers: { 'User-Agent': CHROME } } }))).status).toBe(202);
    for (let i = 0; i < 3; i++) expect((await send(error('NoiseError', 'erp@6'))).status).toBe(202);
    await drained(ctx);

    // every search term of the syntax, typed into the page's address as the search box puts it there
    const listed = async (search: string) => {
      await page.goto(`${ctx.api}/projects/${project}/issues?search=${encodeURIComponent(search)}`);
      await page.getByRole('heading', { level: 1, name: 'Issues' }).waitFor();
      await page.locator('table.issues, main p:has-text("issues")').first().waitFor();
      const table = page.locator('table.issues');
      const text = (await table.count()) > 0 ? ((await table.textContent()) ?? '') : '';
      return ['TriageError', 'NoiseError'].filter((t) => text.includes(t));
    };
    for (const [search, expected] of [
      ['release:erp@5', ['TriageError']],
      ['!release:erp@5 NoiseError', ['NoiseError']],
      ['release:erp@6 environment:staging', ['TriageError']],
      ['release:erp@6 environment:production', ['NoiseError']],
      ['first-release:erp@5', ['TriageError']],
      ['environment:staging', ['TriageError']],
      ['user.id:u2', ['TriageError']],
      ['user.email:carla@shop.example', ['TriageError']],
      ['has:user', ['TriageError']],
      ['browser.name:Chrome', ['TriageError']],
      ['page.kind:cart', ['TriageError']],
      ['level:error NoiseError', ['NoiseError']],
      ['age:+24h', ['TriageError']],
      ['last-seen:-1h', ['TriageError', 'NoiseError']],
      ['times-seen:>2 NoiseError', ['NoiseError']],
      ['times-seen:<3 NoiseError', []],
      ['is:unassigned "while triaging"', ['TriageError', 'NoiseError']],
      ['is:assigned', []],
      ['assigned:me', []],
      ['is:regressed', []],
      ['is:ignored', []],
    ] as const) {
      expect(await listed(search), search).toEqual(expected);
    }
    await listed('company:nobody has:nothing');
    const notice = page.getByRole('status').filter({ hasText: 'Not applied' });
    expect(await notice.textContent()).toContain('has:nothing');
    await page.getByText('Search syntax (?)').click();
    await page.getByRole('table', { name: 'Search terms' }).waitFor();
    await accessible('issues: a search with an unknown term');

    // the list of the release's events, with its matching counts, users and releases
    await listed('release:erp@6 environment:staging');
    const row = page.locator('table.issues tbody tr').first();
    expect(await row.textContent()).toMatch(/1\s*of 2/);
    expect(await row.getByRole('link', { name: 'erp@5' }).getAttribute('href')).toBe(`/projects/${project}/releases/erp%405`);

    // keys: j moves to an issue, x selects it, ? lists the keys
    await listed('"while triaging"');
    await page.keyboard.press('j');
    await page.keyboard.press('x');
    await page.getByText('1 selected').waitFor();
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await accessible('issues: the keys listed');
    await shot('issues-keys');
    await page.keyboard.press('Escape');

    // bulk: every issue on the page resolved at once
    await page.getByRole('checkbox', { name: 'Select every issue on this page' }).check();
    await page.getByText('2 selected').waitFor();
    await accessible('issues: two selected');
    await page.getByRole('group', { name: 'Selected issues' }).getByRole('button', { name: 'Resolve', exact: true }).click();
    await page.getByText(/No unresolved issues match/).waitFor();

    // the issue page: users and first release, reopened, assigned, a comment, resolved in the next release
    const [triage] = (await ctx.runtime.issues.list(Number(project), { status: 'resolved', limit: 1, offset: 0, order: 'last_seen', search: 'TriageError' })).issues;
    await open(`/projects/${project}/issues/${triage!.id}`, /TriageError/);
    const figures = (await page.locator('dl.figures').textContent()) ?? '';
    expect(figures).toContain('Users2');
    expect(figures).toMatch(/erp@5\s*→\s*erp@6/);
    await page.getByRole('button', { name: 'Unresolve' }).click();
    await page.locator('.status', { hasText: 'unresolved' }).waitFor();
    await page.getByLabel('Assignee').selectOption(OWNER.email);
    await page.getByRole('list').filter({ hasText: `assigned it to ${OWNER.email}` }).waitFor();
    await page.getByLabel('Comment (Markdown)').fill('Fixed by **the cart patch**. <b>not bold</b>');
    await page.getByRole('button', { name: 'Comment', exact: true }).click();
    await page.locator('.comment strong', { hasText: 'the cart patch' }).waitFor();
    expect(await page.locator('.comment').first().textContent()).toContain('<b>not bold</b>');
    await page.getByRole('button', { name: 'Resolve in next release' }).click();
    await page.getByText('Resolved in the release after erp@6').waitFor();
    await accessible('issue: triaged');
    await shot('issue-triage');

    // an event of erp@6 leaves it resolved; one of erp@7 regresses it
    expect((await send(error('TriageError', 'erp@6'))).status).toBe(202);
    await drained(ctx);
    await page.reload();
    await page.getByText('Resolved in the release after erp@6').waitFor();
    expect(await page.locator('.status').textContent()).toBe('resolved');
    expect((await send(error('TriageError', 'erp@7'))).status).toBe(202);
    await drained(ctx);
    await expect
      .poll(async () => {
        await page.reload();
        await page.getByRole('heading', { level: 1, name: /TriageError/ }).waitFor();
        return page.locator('.status').textContent();
      })
      .toBe('unresolved');
    await page.locator('.badge', { hasText: 'Regressed' }).waitFor();
    await page.getByRole('list').filter({ hasText: 'Regressed in erp@7' }).waitFor();
    expect(await listed('is:regressed')).toEqual(['TriageError']);
  }, 120_000);

  it('previews alert settings on the last 24 hours, then saves them', async () => {
    await open(`/projects/${project}/alerts`, 'Shop: alerts');
    await page.getByLabel('Brute-force threshold').fill('3');
    await page.getByRole('button', { name: 'Preview on the last 24 hours' }).click();
    await page.locator('[data-preview="brute_force"]').waitFor();
    expect(await page.getByRole('status').first().textContent()).toContain('6 sign-in attempts');
    expect(await page.locator('[data-preview="brute_force"]').textContent()).toBe('1');
    expect(await page.locator('[data-preview="decisions"]').textContent()).toBe('1');
    await accessible('alerts');
    await shot('alerts');
    await page.getByRole('button', { name: 'Save alerts' }).click();
    await page.getByText('Saved: every API process').waitFor();
    expect((await ctx.runtime.admin.showProject(Number(project))).alerts.threshold).toBe(3);
    await page.getByLabel('Brute-force threshold').fill('0');
    await page.getByRole('button', { name: 'Save alerts' }).click();
    // The browser refuses 0 before sending (min=1); the server's rule is the same (schemas/alerts.json).
    expect(await page.getByLabel('Brute-force threshold').evaluate((input) => (input as HTMLInputElement).validity.valid)).toBe(false);
  }, 60_000);

  it("lists the decision the sign-in burst made, and lifts it: the installation's feed shows it removed", async () => {
    await open(`/projects/${project}/alerts`, 'Shop: alerts');
    const row = page.locator('tr[data-decision]');
    await expect.poll(() => row.textContent()).toContain('alice@acme.example');
    expect(await row.textContent()).toContain('203.0.113.7');
    const id = (await row.getAttribute('data-decision'))!;
    const before = await call(ctx, 'GET', '/api/v1/sdk/decisions', { key: secret, instance });
    expect(before.body.decisions.map((d: { id: string }) => d.id)).toEqual([id]);
    await page.getByRole('button', { name: 'Lift' }).click();
    await page.getByText('None: no burst is being acted on.').waitFor();
    const after = await call(ctx, 'GET', `/api/v1/sdk/decisions?since=${before.body.cursor}`, { key: secret, instance });
    expect(after.body).toMatchObject({ decisions: [], removed: [id] });
  }, 60_000);

  it('investigates a sign-in burst on its issue page: attempts per hour, accounts and addresses, the latest attempts, its decision lifted there', async () => {
    for (let i = 0; i < 6; i++) {
      const security = { kind: 'login_failed', actor: 'mallory@acme.example', ip: '198.51.100.23', user_agent: `python-requests/2.${i}` };
      expect((await call(ctx, 'POST', '/api/v1/events', { key: secret, instance, body: { event_id: eventId(), timestamp: new Date(Date.now() - 30_000 + i * 1000).toISOString(), security } })).status).toBe(202);
    }
    // another account tried from the same address: another issue, which the page names
    for (let i = 0; i < 5; i++) {
      const security = { kind: 'login_failed', actor: 'trent@acme.example', ip: '198.51.100.23' };
      expect((await call(ctx, 'POST', '/api/v1/events', { key: secret, instance, body: { event_id: eventId(), timestamp: new Date(Date.now() - 20_000 + i * 1000).toISOString(), security } })).status).toBe(202);
    }
    let issue = '';
    await expect
      .poll(async () => {
        const list = await call(ctx, 'GET', '/api/v1/issues?kind=security&query=mallory', { key: secret, instance });
        issue = list.body.issues?.[0]?.id ?? '';
        return list.body.issues?.[0]?.event_count;
      })
      .toBe(6);
    // the page lists the address's other issues once, as it opens: trent's must be in the list by then
    await expect.poll(async () => (await call(ctx, 'GET', '/api/v1/issues?kind=security&query=trent', { key: secret, instance })).body.issues?.[0]?.event_count).toBe(5);
    await open(`/projects/${project}/issues/${issue}`, /mallory/);
    const figures = page.locator('dl');
    await expect.poll(() => figures.textContent()).toContain('Brute force');
    expect(await figures.textContent()).not.toContain('Last release');
    await page.getByRole('heading', { name: 'Attempts per hour' }).waitFor();
    expect(await page.getByRole('img', { name: /6 attempts in the last 24 hours/ }).count()).toBe(1);
    const attempts = page.getByRole('table', { name: 'Sign-in attempts, newest first' });
    await expect.poll(() => attempts.locator('tbody tr').count()).toBe(6);
    expect(await attempts.locator('tbody tr').first().textContent()).toContain('python-requests/2.5');
    expect(await page.getByRole('table', { name: 'Attempts by addresses' }).textContent()).toContain('198.51.100.23');
    expect(await page.getByRole('table', { name: 'Attempts by accounts' }).textContent()).toContain('mallory@acme.example');
    const decision = page.locator('tr[data-decision]');
    await expect.poll(() => decision.count()).toBe(1);
    expect(await decision.textContent()).toContain('198.51.100.23');
    expect(await decision.getAttribute('data-state')).toBe('active');
    await expect.poll(() => page.getByRole('region', { name: /Other open security issues from 198.51.100.23/ }).textContent()).toContain('trent@acme.example');
    await accessible('security-issue');
    await shot('security-issue');
    await page.getByRole('button', { name: 'Lift' }).click();
    // the decision stays in the issue's history, lifted, with when
    await page.locator('tr[data-decision][data-state="lifted"]').waitFor();
    expect(await page.getByRole('button', { name: 'Lift' }).count()).toBe(0);
    expect((await ctx.runtime.decisions.list(Number(project), new Date())).decisions.filter((d) => d.issue_id === issue)).toEqual([]);
    await page.getByRole('link', { name: 'All 6 attempts' }).click();
    await page.getByRole('table', { name: 'Sign-in attempts, newest first' }).waitFor();
    await accessible('security-issue-attempts');
  }, 90_000);

  it('adds a CrowdSec bouncer (its key shown once), shows its last pull, and revokes it', async () => {
    await open(`/projects/${project}/alerts`, 'Shop: alerts');
    await page.getByText('No bouncer yet.').waitFor();
    expect(await page.getByText(`${new URL(ctx.api).origin}/`, { exact: true }).count()).toBe(1); // the api_url to set
    await page.getByLabel('Name').fill('edge-nginx');
    await page.getByRole('button', { name: 'Add bouncer' }).click();
    const key = (await page.getByLabel('Bouncer key', { exact: true }).textContent())!.trim();
    expect(key).toMatch(/^lkb_/);
    const row = page.locator('tr[data-bouncer]');
    await expect.poll(() => row.textContent()).toContain('never');
    const pull = () => call(ctx, 'GET', '/v1/decisions/stream?startup=true', { headers: { 'x-api-key': key, 'user-agent': 'crowdsec-nginx-bouncer/v1.0.8' } });
    expect((await pull()).status).toBe(200);
    // the pull is noted beside its answer: the page shows it once written
    await expect
      .poll(async () => {
        await page.reload();
        return row.textContent();
      })
      .toContain('crowdsec-nginx-bouncer/v1.0.8');
    expect(await page.getByText(key).count()).toBe(0); // shown once only
    await accessible('alerts bouncers');
    await page.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('No bouncer yet.').waitFor();
    expect((await pull()).status).toBe(403);
  }, 60_000);

  it('adds a webhook channel (its secret shown once), sends a test and reads the deliveries log', async () => {
    await open(`/projects/${project}/alerts`, 'Shop: alerts');
    await page.getByText('No channel yet').waitFor();
    await page.getByLabel('URL').fill(`${receiver.url}/dashboard-hook`);
    await page.getByRole('button', { name: 'Add channel' }).click();
    const signing = (await page.getByLabel('Signing secret', { exact: true }).textContent())!.trim();
    expect(signing).toMatch(/^whsec_/);
    const row = page.locator('tr[data-channel]');
    await expect.poll(() => row.textContent()).toContain(`${receiver.url}/dashboard-hook (JSON)`);
    expect(await row.textContent()).toContain('New issue, Regression, Sign-in burst');
    await page.getByRole('button', { name: 'Send test' }).click();
    await page.getByText('A test notification is on its way').waitFor();
    await expect.poll(() => receiver.of('test').length, { timeout: 15_000 }).toBe(1);
    expect(receiver.signed(receiver.of('test')[0]!, signing)).toBe(true);
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return page.locator('tr[data-delivery]').first().textContent();
        },
        { timeout: 15_000 },
      )
      .toContain('delivered');
    await page.locator('tr[data-delivery] summary').first().click();
    expect(await page.locator('tr[data-delivery] li').first().textContent()).toContain(': 200');
    await accessible('alerts notifications');
    await shot('alerts-notifications');
  }, 60_000);

  it('Monitors: an owner adds one whose next runs show in its time zone; a job that failed shows failing, its runs as a timeline', async () => {
    await open(`/projects/${project}/monitors`, 'Monitors');
    await page.getByLabel('Slug').fill('Nightly Backup');
    await page.getByLabel('Crontab').fill('30 2 * * *');
    await page.getByLabel('Time zone').fill('Europe/Berlin');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('link', { name: 'nightly-backup' }).waitFor();
    const checkIn = (status: string) => fetch(`${ctx.api}/api/${project}/cron/db-export/${publicKey}/?status=${status}`);
    expect((await checkIn('ok')).status).toBe(202);
    expect((await checkIn('error')).status).toBe(202);
    await drained(ctx);
    await open(`/projects/${project}/monitors`, 'Monitors');
    expect(await page.getByRole('row', { name: /db-export/ }).textContent()).toContain('failing');
    expect(await page.getByRole('row', { name: /nightly-backup/ }).textContent()).toContain('waiting for a first check-in');
    await accessible('monitors');
    await shot('monitors');
    await page.getByRole('link', { name: 'nightly-backup' }).click();
    await page.getByRole('heading', { level: 1, name: 'nightly-backup' }).waitFor();
    const runs = await page.getByRole('heading', { name: 'Next runs (Europe/Berlin)' }).locator('xpath=following-sibling::ol[1]/li').allTextContents();
    expect(runs).toHaveLength(5);
    for (const run of runs) expect(run).toContain('02:30');
    await open(`/projects/${project}/monitors/db-export`, 'db-export');
    expect(await page.locator('.timeline .run').evaluateAll((runs) => runs.map((r) => r.className))).toEqual(['run run-ok', 'run run-error']);
    await accessible('monitor');
    await shot('monitor');
  }, 60_000);

  it('Performance: the groups with their percentiles, a group with its N+1 query, a trace with its error and log line pinned, the logs searched', async () => {
    const end = Date.now() / 1000;
    const trace = eventId();
    const root = eventId().slice(0, 16);
    const query = (i: number) => ({ span_id: `${i}`.padStart(16, 'a'), parent_span_id: root, trace_id: trace, op: 'db.query', description: `SELECT * FROM items WHERE cart = ${i}`, start_timestamp: end - 0.2 + i * 0.01, timestamp: end - 0.195 + i * 0.01 });
    const tx = (n: number, failed: boolean, id = eventId()) => ({
      event_id: id,
      type: 'transaction',
      transaction: 'GET /cart/:id',
      transaction_info: { source: 'route' },
      start_timestamp: end - 0.25 - n * 0.01,
      timestamp: end,
      contexts: { trace: { trace_id: failed ? trace : eventId(), span_id: failed ? root : eventId().slice(0, 16), op: 'http.server', status: failed ? 'internal_error' : 'ok' } },
      spans: Array.from({ length: 6 }, (_, i) => query(i)),
    });
    const items: unknown[] = [];
    for (let n = 0; n < 5; n++) items.push({ type: 'transaction' }, tx(n, n === 0));
    items.push({ type: 'event' }, { event_id: eventId(), message: 'the cart failed', contexts: { trace: { trace_id: trace, span_id: root } } });
    items.push({ type: 'log', item_count: 1 }, { items: [{ timestamp: end - 0.1, level: 'warn', body: 'cart total is negative', trace_id: trace, attributes: { 'sentry.trace.parent_span_id': { type: 'string', value: root }, cart: { type: 'integer', value: 7 } } }] });
    const body = [{}, ...items].map((p) => JSON.stringify(p)).join('\n');
    expect((await fetch(`${ctx.api}/api/${project}/envelope/?sentry_key=${publicKey}`, { method: 'POST', body })).status).toBe(200);
    await drained(ctx);
    await open(`/projects/${project}/performance`, 'Performance');
    const row = page.getByRole('row', { name: /GET \/cart\/:id/ });
    expect(await row.textContent()).toContain('20%'); // one of five failed
    await accessible('performance');
    await shot('performance');
    await page.getByRole('link', { name: 'GET /cart/:id' }).click();
    await page.getByRole('heading', { level: 1, name: 'GET /cart/:id' }).waitFor();
    expect(await page.getByRole('table', { name: 'Span groups by total time' }).textContent()).toContain('SELECT * FROM items WHERE cart = %s');
    expect(await page.getByRole('heading', { name: 'N+1 queries' }).count()).toBe(1);
    await accessible('performance group');
    await shot('performance-group');
    await page.getByRole('table', { name: 'Slowest samples' }).getByRole('link', { name: trace }).click();
    await page.getByRole('heading', { level: 1, name: `Trace ${trace.slice(0, 8)}` }).waitFor();
    const waterfall = page.getByRole('list', { name: 'Spans of the trace, in the order they ran' });
    await waterfall.getByText('cart total is negative').waitFor();
    expect(await waterfall.locator('li').count()).toBe(7);
    expect(await waterfall.getByRole('link', { name: /^issue \d+$/ }).count()).toBe(1);
    await accessible('trace');
    await shot('trace');
    await open(`/projects/${project}/logs?q=negative`, 'Logs');
    expect(await page.getByRole('table', { name: 'Log lines' }).textContent()).toContain('cart=7');
    await accessible('logs');
  }, 60_000);

  it('Settings shows the DSN to copy, and what ingestion accepted and dropped, by reason', async () => {
    const envelope = [{}, { type: 'profile' }, {}, { type: 'client_report' }, { discarded_events: [{ reason: 'queue_overflow', category: 'error', quantity: 4 }] }]
      .map((p) => JSON.stringify(p))
      .join('\n');
    const sent = await fetch(`${ctx.api}/api/${project}/envelope/?sentry_key=${publicKey}`, { method: 'POST', body: envelope });
    expect(sent.status).toBe(200);
    await ctx.runtime.ingestStats.flush();
    await open(`/projects/${project}`, 'Shop: settings');
    expect(await page.getByLabel('DSN', { exact: true }).textContent()).toBe(`http://${publicKey}@${new URL(ctx.api).host}/${project}`);
    const dropped = page.getByRole('table', { name: 'Dropped by type and reason' });
    await dropped.getByText('discarded by the SDK (queue_overflow)').waitFor();
    expect(await dropped.textContent()).toContain('a kind of item Lookout does not keep');
    await accessible('settings ingestion');
  }, 60_000);

  it('Settings: an owner sets a quota and turns filters on, and they hold', async () => {
    await open(`/projects/${project}`, 'Shop: settings');
    await page.getByLabel('Error events a minute').fill('5000');
    await page.getByLabel('Errors from localhost').check();
    await page.getByLabel('Releases to filter out').fill('*-dev\n  \nerp@0.*');
    await page.getByRole('button', { name: 'Save quotas and filters' }).click();
    await expect
      .poll(async () => {
        const p = await ctx.runtime.stores.projects.get(Number(project));
        return [p?.quotas?.events_per_minute, p?.filters?.localhost, p?.filters?.releases];
      })
      .toEqual([5000, true, ['*-dev', 'erp@0.*']]);
    const sent = await fetch(`${ctx.api}/api/${project}/store/?sentry_key=${publicKey}`, {
      method: 'POST',
      body: JSON.stringify({ message: 'from a developer machine', request: { url: 'http://localhost:8069/web' } }),
    });
    expect(sent.status).toBe(200);
    await ctx.runtime.ingestStats.flush();
    await page.reload();
    await page.getByRole('table', { name: 'Dropped by type and reason' }).getByText('filtered: from localhost').waitFor();
    expect(await page.getByLabel('Error events a minute').inputValue()).toBe('5000');
    await accessible('settings quotas and filters');
    await ctx.runtime.admin.setProject(Number(project), { quotas: { events_per_minute: 120_000 }, filters: { localhost: false, releases: [] } });
  }, 60_000);

  it('rotates the secret key, unbinds, and lets another installation activate', async () => {
    await open(`/projects/${project}`, 'Shop: settings');
    await page.getByText('https://erp.acme.example').waitFor();
    await accessible('settings');
    await shot('settings');

    await page.getByRole('button', { name: 'Rotate secret key' }).click();
    const rotated = (await page.getByLabel('New secret key', { exact: true }).textContent())!.trim();
    expect(rotated).not.toBe(secret);
    expect((await call(ctx, 'GET', '/api/v1/sdk/config', { key: secret, instance })).status).toBe(401);
    expect((await call(ctx, 'GET', '/api/v1/sdk/config', { key: rotated, instance })).status).toBe(200);

    await page.getByRole('button', { name: 'Unbind' }).click();
    await page.getByText('Not bound').waitFor();
    const other = await call(ctx, 'POST', '/api/v1/sdk/activate', { key: rotated, body: { instance_id: 'inst-web-0002' } });
    expect(other.status).toBe(200);
    await page.reload();
    await page.getByText('inst-web-0002').waitFor();
  }, 60_000);

  it('shows the organisation with its seats, and lets the owner add an invite', async () => {
    await open('/organisation', 'Organisation: Acme');
    await page.getByLabel('New invite (email)').fill('new.hire@acme.example');
    await page.getByRole('button', { name: 'Add invite' }).click();
    await page.getByRole('button', { name: 'Remove new.hire@acme.example from invites' }).waitFor();
    expect(await page.locator('dl.figures').textContent()).toContain('Used2');
    await accessible('organisation');
    await shot('organisation');
  }, 60_000);

  it('lets a new user set a password with the one-time link, then sign in', async () => {
    const added = await ctx.runtime.accounts.addUser({ org: Number(org), email: 'member@acme.example', role: 'member' });
    expect(added.set_password_path).toMatch(/^\/set-password#/);
    const other = await context.browser()!.newContext();
    const fresh = await other.newPage();
    try {
      await fresh.goto(`${ctx.api}${added.set_password_path}`);
      await fresh.getByRole('heading', { level: 1, name: 'Set your password' }).waitFor();
      await accessible('set-password', fresh);
      await fresh.getByLabel('New password').fill('member password for tests');
      await fresh.getByLabel('The same password again').fill('member password for tests');
      await fresh.getByRole('button', { name: 'Set password' }).click();
      await fresh.getByRole('heading', { level: 1, name: 'Password set' }).waitFor();
      await fresh.getByRole('link', { name: 'Sign in' }).click();
      await fresh.getByLabel('Email').fill('member@acme.example');
      await fresh.getByLabel('Password').fill('member password for tests');
      await fresh.getByRole('button', { name: 'Sign in' }).click();
      await fresh.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
      // A member sees the projects but not the owners' controls.
      expect(await fresh.getByRole('button', { name: 'Create project' }).count()).toBe(0);
    } finally {
      await other.close();
    }
  }, 60_000);

  it('Account: a member turns on two-factor sign-in from the QR code, keeps the recovery codes, makes an API token, and signs in with a code', async () => {
    const other = await context.browser()!.newContext();
    const fresh = await other.newPage();
    const signIn = async () => {
      await fresh.goto(`${ctx.api}/sign-in`);
      await fresh.getByLabel('Email').fill('member@acme.example');
      await fresh.getByLabel('Password').fill('member password for tests');
      await fresh.getByRole('button', { name: 'Sign in', exact: true }).click();
    };
    try {
      await signIn();
      await fresh.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
      await fresh.getByRole('link', { name: 'Account' }).click();
      await fresh.getByRole('heading', { level: 1, name: 'Account: member@acme.example' }).waitFor();
      await fresh.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
      await fresh.getByRole('img', { name: 'QR code of the two-factor key' }).waitFor();
      const key = (await fresh.getByLabel('Two-factor key').textContent())!;
      await fresh.getByLabel('Code from the app').fill(await generate({ secret: key }));
      await fresh.getByRole('button', { name: 'Turn on' }).click();
      const codes = fresh.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem');
      await codes.first().waitFor();
      expect(await codes.count()).toBe(10);
      await fresh.getByText('On. 10 recovery code(s) left.').waitFor();
      await fresh.getByLabel('Token name').fill('ci');
      await fresh.getByRole('button', { name: 'Create token' }).click();
      const token = (await fresh.getByLabel('API token', { exact: true }).textContent())!;
      expect(token).toMatch(/^lkt_/);
      expect((await call(ctx, 'GET', '/api/dashboard/projects', { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
      await fresh.getByRole('button', { name: 'Revoke ci' }).waitFor();
      await accessible('account', fresh);
      await fresh.screenshot({ path: path.join(SHOTS, 'account.png'), fullPage: true });

      // signing in now asks for a code after the password
      await fresh.getByRole('button', { name: 'Sign out' }).click();
      await fresh.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      await signIn();
      await fresh.getByLabel('Code from your authenticator app, or a recovery code').fill(await generate({ secret: key, epoch: Math.floor(Date.now() / 1000) + 30 }));
      await fresh.getByRole('button', { name: 'Sign in', exact: true }).click();
      await fresh.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
    } finally {
      await other.close();
    }
  }, 60_000);

  it('on a phone (390 px) in dark mode: the project pages no wider than the screen and accessible; a release with dots and + opens by its address', async () => {
    const release = 'erp@17.0.4+build.7';
    const sessions = [{ sid: 'sid-phone-0001', did: 'user-phone', release, environment: 'production', status: 'exited', errors: 0, started: new Date().toISOString() }];
    expect((await call(ctx, 'POST', '/api/v1/sessions', { key: publicKey, body: { sessions } })).body).toMatchObject({ accepted: 1 });
    await drained(ctx);
    const [issue] = (await ctx.runtime.issues.list(Number(project), { status: 'unresolved', limit: 1, offset: 0, order: 'last_seen', kind: 'error' })).issues;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      const releasePage = `/projects/${project}/releases/${encodeURIComponent(release)}?environment=production`;
      for (const pathname of [
        '/projects',
        `/projects/${project}/issues`,
        `/projects/${project}/issues/${issue!.id}`,
        `/projects/${project}/releases`,
        releasePage,
        `/projects/${project}/alerts`,
        `/projects/${project}/monitors`,
        `/projects/${project}/monitors/db-export`,
        `/projects/${project}`,
        `/projects/${project}/issues?search=${encodeURIComponent('release:erp@6 has:nothing')}`,
        `/projects/${project}/issues/${issue!.id}/events`,
        '/organisation',
        '/account',
      ]) {
        await page.goto(`${ctx.api}${pathname}`);
        await page.getByRole('heading', { level: 1 }).first().waitFor({ timeout: 15_000 });
        await page.waitForLoadState('networkidle');
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        // what sticks out, named in the failure
        const wide = await page.evaluate(() =>
          [...document.querySelectorAll('body *')]
            .filter((e) => e.getBoundingClientRect().right > 391 && !e.closest('.scroll'))
            .filter((e) => ![...e.children].some((c) => c.getBoundingClientRect().right > 391))
            .slice(0, 5)
            .map((e) => `${e.tagName.toLowerCase()}${e.className ? `.${String(e.className).replace(/\s+/g, '.')}` : ''} (${Math.round(e.getBoundingClientRect().right)} px)`),
        );
        expect(width, `${pathname} is ${width} px wide: ${wide.join(', ')}`).toBeLessThanOrEqual(390);
        await accessible(`${pathname} at 390 px, dark`);
      }
      await page.goto(`${ctx.api}${releasePage}`);
      await page.getByRole('heading', { level: 1, name: `Release ${release}` }).waitFor();
      await page.reload();
      await page.getByRole('heading', { level: 1, name: `Release ${release}` }).waitFor();
      await shot('release-phone-dark');
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
      await page.emulateMedia({ colorScheme: 'light' });
    }
  }, 120_000);

  it('signs out: the session ends and the pages ask to sign in again', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await page.goto(`${ctx.api}/organisation`);
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).searchParams.get('next')).toBe('/organisation');
    const api = await page.evaluate(async () => (await fetch('/api/dashboard/projects')).status);
    expect(api).toBe(401);
  }, 60_000);
});
