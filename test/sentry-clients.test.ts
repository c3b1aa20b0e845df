/**
 * Real Sentry clients nobody here wrote, reporting to a real Lookout (issue
 * 46): Debian's sentry-python 1.9 (errors to /store/, gzip), sentry-ruby 5.3
 * and raven-ruby 3.1 (base64 of zlib), npm's raven 2 (the same),
 * sentry-go built from the module proxy, and @sentry/browser in Chromium
 * (with user feedback). Each client is installed by the
 * test when missing (test/helpers/real-clients.ts), run against a DSN of a
 * fresh project, and what it reported is read back through the API: the
 * issue with its frames, source context, breadcrumbs, tags, user, request
 * and contexts, and secrets in local variables filtered.
 */
import esbuild from 'esbuild';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { boundProject, drained, type TestContext } from './helpers/context.ts';
import { answers, CLIENT_SOURCES, ensureDebian, ensureNpm, goBuild, runClient } from './helpers/real-clients.ts';
import { withReceiver, type Receiver } from './helpers/receiver.ts';
import { until } from './helpers/until.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
let receiver: Receiver;
withWorkers(['events', 'sessions', 'notifications'], (c) => (ctx = c), { FLUSH_INTERVAL_MS: '100', WEBHOOK_ALLOW_PRIVATE: 'true' });
withReceiver((r) => (receiver = r));

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const PYTHON = '/usr/bin/python3'; // Debian's interpreter: its packages are Debian's, not a pyenv's

/** A fresh project, its DSN, and its one issue once it is there (with the latest event). */
async function project() {
  const p = await boundProject(ctx);
  const dsn = `http://${p.publicKey}@${new URL(ctx.api).host}/${p.id}`;
  const issue = async () => {
    await until(async () => (await p.get('/issues')).body.total >= 1, 30_000);
    await drained(ctx);
    const [first] = (await p.get('/issues')).body.issues as { id: string }[];
    return (await p.get(`/issues/${first!.id}`)).body;
  };
  return { ...p, dsn, issue };
}

/** The frames of an event's outermost exception. */
const framesOf = (event: any): any[] => event.exception.values.at(-1).stacktrace.frames;

describe("Debian's sentry-python 1.9 (python3-sentry-sdk)", () => {
  beforeAll(() => ensureDebian(['python3-sentry-sdk'], () => answers(PYTHON, ['-c', 'import sentry_sdk'])), 600_000);
  const python = (dsn: string, scenario: string, tag: string) => runClient(PYTHON, [path.join(CLIENT_SOURCES, 'python-client.py'), dsn, scenario, tag]);

  it('capture_exception: the issue with its frames, source context, variables (a token filtered), breadcrumbs, tags, user and contexts', async () => {
    const p = await project();
    await python(p.dsn, 'exception', 'py-exc');
    const issue = await p.issue();
    expect(issue).toMatchObject({ kind: 'error', exception_type: 'TypeError', last_release: 'shop@1.4.2' });
    expect(issue.title).toMatch(/^TypeError: unsupported operand/);
    expect(issue.culprit).toContain('checkout');
    const event = issue.latest_event;
    const crash = framesOf(event).at(-1);
    expect(crash).toMatchObject({ function: 'checkout', context_line: expect.stringContaining('cart_total / discount') });
    expect(crash.pre_context.length).toBeGreaterThan(0);
    expect(crash.vars.api_token).toBe('[Filtered]');
    expect(event.breadcrumbs.values).toEqual(expect.arrayContaining([expect.objectContaining({ message: 'added 3 items', category: 'cart' })]));
    expect(event.tags).toMatchObject({ scenario: 'py-exc' });
    expect(event.user).toMatchObject({ id: '42', email: 'ada@example.com' });
    expect(event.contexts.runtime).toMatchObject({ name: 'CPython' });
    expect(event.environment).toBe('production');
  });

  it('capture_message', async () => {
    const p = await project();
    await python(p.dsn, 'message', 'py-msg');
    const issue = await p.issue();
    expect(issue).toMatchObject({ title: 'py message py-msg', level: 'warning' });
  });

  it('logging.error with params: the issue is titled with the params applied', async () => {
    const p = await project();
    await python(p.dsn, 'logging', 'py-log');
    const issue = await p.issue();
    expect(issue.title).toBe('py log error py-log for order 1042');
    expect(issue.latest_event.logentry).toMatchObject({ message: 'py log error %s for order %d', params: ['py-log', 1042] });
    expect(issue.latest_event.logger).toBe('shop.payments');
  });

  it('a WSGI request error: the request (URL, method, headers) with the exception', async () => {
    const p = await project();
    await python(p.dsn, 'wsgi', 'py-wsgi');
    const issue = await p.issue();
    expect(issue.title).toBe('ValueError: wsgi failure py-wsgi');
    expect(issue.latest_event.request).toMatchObject({ method: 'GET', url: expect.stringContaining('/cart/checkout'), query_string: 'step=2' });
  });
});

describe("Debian's sentry-ruby 5.3 and raven-ruby 3.1", () => {
  beforeAll(() => ensureDebian(['ruby-sentry-ruby', 'ruby-sentry-raven'], () => answers('ruby', ['-e', 'require "sentry-ruby"; require "raven"'])), 600_000);
  const ruby = (kind: 'sentry' | 'raven', dsn: string, tag: string) => runClient('ruby', [path.join(CLIENT_SOURCES, 'ruby-client.rb'), kind, dsn, tag]);

  it.each([
    ['sentry-ruby (an envelope, fingerprint [])', 'sentry' as const, 'rb breadcrumb', '7'],
    ['raven-ruby (/store/, base64 of zlib, no time zone)', 'raven' as const, 'raven breadcrumb', '8'],
  ])('%s: a Ruby exception with its frames, breadcrumbs, tags and user', async (_, kind, breadcrumb, user) => {
    const p = await project();
    await ruby(kind, p.dsn, `rb-${kind}`);
    const issue = await p.issue();
    expect(issue).toMatchObject({ exception_type: 'ZeroDivisionError', last_release: 'shop@2.0.1' });
    expect(issue.culprit).toContain('ruby-client.rb');
    const event = issue.latest_event;
    // Ruby 3.1 lists Integer#/ as the crashing frame, in the line of `total`
    expect(framesOf(event).find((f) => f.function === 'total')).toMatchObject({ lineno: 7, context_line: expect.stringContaining('ZeroDivisionError'), pre_context: expect.any(Array) });
    expect(JSON.stringify(event.breadcrumbs)).toContain(breadcrumb);
    expect(event.tags).toMatchObject({ scenario: `rb-${kind}` });
    expect(event.user).toMatchObject({ id: user });
    expect(Math.abs(Date.parse(event.timestamp) - Date.now())).toBeLessThan(120_000); // read as UTC
  });
});

describe("npm's raven 2 (the legacy Node client)", () => {
  let modules = '';
  beforeAll(() => {
    modules = path.join(ensureNpm('raven', 'raven@2'), 'node_modules');
  }, 600_000);

  it('a Node exception through /store/ (base64 of zlib): its frames, source context, breadcrumbs, tags and user', async () => {
    const p = await project();
    await runClient(process.execPath, [path.join(CLIENT_SOURCES, 'raven-node.cjs'), p.dsn, 'raven-node'], { env: { ...process.env, NODE_PATH: modules } });
    const issue = await p.issue();
    expect(issue).toMatchObject({ exception_type: 'TypeError', last_release: 'shop@3.0.0' });
    expect(issue.title).toContain("Cannot read properties of undefined (reading 'code')");
    const event = issue.latest_event;
    expect(framesOf(event).at(-1)).toMatchObject({ function: 'applyCoupon', context_line: expect.stringContaining('cart.coupon.code') });
    expect(JSON.stringify(event.breadcrumbs)).toContain('raven-node breadcrumb');
    expect(event.tags).toMatchObject({ scenario: 'raven-node' });
    expect(event.user).toMatchObject({ id: '9' });
  });
});

describe('sentry-go 0.40 (built from the module proxy)', () => {
  let binary = '';
  beforeAll(() => {
    binary = goBuild('go-client');
  }, 600_000);

  it('a Go error: the wrapped error with its frames, breadcrumbs, tags and user', async () => {
    const p = await project();
    await runClient(binary, [p.dsn, 'error', 'go-error']);
    const issue = await p.issue();
    expect(issue.title).toContain('reserve sku-1: out of stock');
    const event = issue.latest_event;
    expect(framesOf(event)).toEqual(expect.arrayContaining([expect.objectContaining({ module: 'main', function: 'main', in_app: true })]));
    expect(JSON.stringify(event.breadcrumbs)).toContain('go breadcrumb');
    expect(event.tags).toMatchObject({ scenario: 'go-error' });
    expect(event.user).toMatchObject({ id: '10' });
    expect(event.contexts.runtime).toMatchObject({ name: 'go' });
  });

  it('a Go panic through sentry.Recover: the runtime error where it happened', async () => {
    const p = await project();
    await runClient(binary, [p.dsn, 'panic', 'go-panic']);
    const issue = await p.issue();
    expect(issue.title).toContain('index out of range');
    // the stack is taken where the panic was recovered: the panicking call is in it
    expect(framesOf(issue.latest_event)).toEqual(expect.arrayContaining([expect.objectContaining({ module: 'main', function: 'shipOrder' })]));
    expect(issue.latest_event.tags).toMatchObject({ scenario: 'go-panic' });
  });

  it('CaptureCheckIn: a run in progress then ok, with its monitor config, makes the monitor and ends the run', async () => {
    const p = await project();
    await runClient(binary, [p.dsn, 'cron', 'go-cron']);
    await drained(ctx);
    const monitor = await ctx.runtime.stores.checkins.monitor(p.id, 'go-cron');
    expect(monitor?.config).toMatchObject({ schedule: { type: 'crontab', value: '*/5 * * * *' }, checkin_margin: 2, max_runtime: 10, timezone: 'America/New_York' });
    expect(await ctx.runtime.monitorsState.read({ project: p.id, slug: 'go-cron', environment: 'production' })).toMatchObject({ status: 'ok', open: [], failures_in_row: 0 });
  });
});

describe('@sentry/browser 10 in Chromium', () => {
  let bundle = '';
  beforeAll(async () => {
    const dir = ensureNpm('@sentry/browser', '@sentry/browser@10');
    const built = await esbuild.build({ entryPoints: [path.join(CLIENT_SOURCES, 'browser-page.mjs')], bundle: true, format: 'esm', write: false, nodePaths: [path.join(dir, 'node_modules')], logLevel: 'silent' });
    bundle = built.outputFiles[0]!.text;
  }, 600_000);

  it('a browser error with its frames, breadcrumb, tag and user, and the user feedback about it on its issue', async () => {
    const p = await project();
    // the page, from an origin of its own: the SDK posts to Lookout across origins (CORS)
    const page = http.createServer((req, res) => {
      if (req.url?.startsWith('/app.js')) res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
      else res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>shop</title><script type="module" src="/app.js"></script>');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
    try {
      const tab = await browser.newPage();
      await tab.goto(`http://127.0.0.1:${(page.address() as AddressInfo).port}/?dsn=${encodeURIComponent(p.dsn)}`);
      await tab.waitForFunction(() => (window as unknown as { done?: boolean }).done === true, undefined, { timeout: 20_000 });
      const eventId = await tab.evaluate(() => (window as unknown as { eventId: string }).eventId);
      const issue = await p.issue();
      expect(issue).toMatchObject({ exception_type: 'TypeError', last_release: 'web@1.0.0' });
      const event = issue.latest_event;
      expect(event.event_id).toBe(eventId);
      expect(framesOf(event).at(-1)).toMatchObject({ function: 'addToCart', filename: expect.stringContaining('/app.js') });
      expect(JSON.stringify(event.breadcrumbs)).toContain('clicked Add to cart');
      expect(event.tags).toMatchObject({ scenario: 'browser' });
      expect(event.user).toMatchObject({ id: '11' });
      expect(event.contexts.browser ?? event.request?.headers?.['User-Agent']).toBeTruthy();
      await until(async () => (await p.get(`/issues/${issue.id}/feedback`)).body.total === 1, 20_000);
      expect((await p.get(`/issues/${issue.id}/feedback`)).body.feedback).toEqual([expect.objectContaining({ event_id: eventId, source: 'feedback', name: 'Web User', email: 'web@example.com', comments: 'The button did nothing' })]);
      expect((await p.get('/issues')).body.issues[0].user_feedback).toBe(1);
    } finally {
      await browser.close();
      page.close();
    }
  }, 60_000);
});

describe("Chromium's Content-Security-Policy reports", () => {
  /** Serves `html` with a CSP whose report-uri is the project's security endpoint; returns its URL and a stop. */
  async function cspPage(reportUri: string, html: string) {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html', 'content-security-policy': `script-src 'self'; report-uri ${reportUri}` });
      res.end(html);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/checkout`, close: () => server.close() };
  }

  it('a violation raised by Chromium becomes a security issue of the csp kind, grouped by directive and blocked origin, and notified', async () => {
    const p = await project();
    await ctx.runtime.notifications.add(p.id, { webhook: `${receiver.url}/csp/${p.id}`, on: ['security.csp'] });
    const report = `${ctx.api}/api/${p.id}/security/?sentry_key=${p.publicKey}`;
    const page = await cspPage(report, '<!doctype html><title>checkout</title><script src="https://evil.example/skimmer.js"></script><script src="https://evil.example/other.js"></script>');
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
    try {
      const tab = await browser.newPage();
      await tab.goto(page.url);
      await until(async () => (await p.get('/issues?kind=security')).body.issues.some((i: { event_count: number }) => i.event_count >= 2), 20_000);
    } finally {
      await browser.close();
      page.close();
    }
    const [issue] = (await p.get('/issues?kind=security')).body.issues;
    // two scripts from one origin: one issue, two events
    expect(issue).toMatchObject({ kind: 'security', exception_type: 'csp', title: "Blocked 'script-src-elem' from https://evil.example", event_count: 2, level: 'warning' });
    expect(issue.culprit).toBe(page.url);
    const event = (await p.get(`/issues/${issue.id}`)).body.latest_event;
    expect(event.csp).toMatchObject({ document_uri: page.url, effective_directive: 'script-src-elem', blocked_uri: expect.stringMatching(/^https:\/\/evil\.example\//), original_policy: expect.stringContaining("script-src 'self'") });
    expect(event.request.headers['User-Agent']).toContain('Chrome');
    await until(() => receiver.of('security.csp').some((r) => r.path === `/csp/${p.id}`), 20_000);
    expect(receiver.of('security.csp').find((r) => r.path === `/csp/${p.id}`)!.body).toMatchObject({ event: 'security.csp', issue: { kind: 'security', title: "Blocked 'script-src-elem' from https://evil.example" } });
  }, 60_000);

  it("the Reporting API's reports+json (report-to) reads the same; other report types are counted, not kept", async () => {
    const p = await project();
    const body = [
      { age: 1, type: 'csp-violation', url: 'https://shop.example/cart', user_agent: 'Mozilla/5.0 Chrome/156', body: { documentURL: 'https://shop.example/cart', effectiveDirective: 'img-src', blockedURL: 'data', originalPolicy: "img-src 'self'", disposition: 'enforce', sourceFile: 'https://shop.example/app.js', lineNumber: 12, columnNumber: 4, statusCode: 200 } },
      { age: 1, type: 'deprecation', url: 'https://shop.example/cart', body: { id: 'x' } },
    ];
    const res = await fetch(`${ctx.api}/api/${p.id}/security/?sentry_key=${p.publicKey}`, { method: 'POST', headers: { 'content-type': 'application/reports+json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    expect((await res.json()).ids).toHaveLength(1);
    const issue = await p.issue();
    expect(issue).toMatchObject({ kind: 'security', exception_type: 'csp', title: "Blocked 'img-src' from data" });
    expect(issue.latest_event.csp).toMatchObject({ source_file: 'https://shop.example/app.js', line_number: 12, column_number: 4 });
    await ctx.runtime.ingestStats.flush();
    expect((await p.get('/ingestion')).body.dropped).toEqual([{ type: 'security', reason: 'not_kept', count: 1 }]);
  });
});
