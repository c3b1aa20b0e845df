/**
 * @lookout/browser in Debian's headless Chromium (playwright-core, no
 * browser download): test pages on their own origin load the built IIFE
 * file, and the sessions they send land in a real Lookout's rollups.
 */
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkers } from '../../../workers/main.ts';
import { drained, makeProject, startTestContext, type TestContext } from '../../../test/helpers/context.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
// Resolved through the package's exports, as a user's bundler or <script> copy would find it.
const IIFE = fs.readFileSync(createRequire(import.meta.url).resolve('@lookout/browser/lookout.min.js'), 'utf8');

let ctx: TestContext;
let workers: Awaited<ReturnType<typeof startWorkers>>;
let browser: Browser;
let pages: http.Server;
let origin: string;
const html = new Map<string, string>();

beforeAll(async () => {
  ctx = await startTestContext();
  workers = await startWorkers(ctx.runtime, { queues: ['sessions', 'events'] });
  pages = http.createServer((req, res) => {
    if (req.url === '/lookout.min.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(IIFE);
    const page = html.get(req.url ?? '');
    res.writeHead(page ? 200 : 404, { 'content-type': 'text/html' }).end(page ?? 'not found');
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  expect(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (npm test does)`).toBe(true);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await browser?.close();
  pages?.close();
  await workers?.close();
  await ctx?.close();
});

/**
 * Loads a page that starts Lookout with `init` and then runs `script`, then
 * leaves it (pagehide sends). The tab stays open on about:blank: closing it
 * at once may end the renderer before it hands the beacon over (once, in a
 * full run on a busy machine, a session never arrived).
 */
async function visit(path: string, init: Record<string, unknown>, script: string): Promise<void> {
  html.set(path, `<!doctype html><title>shop</title><script src="/lookout.min.js"></script>
<script>Lookout.init(${JSON.stringify(init)});</script><script>${script}</script>`);
  const page = await browser.newPage();
  await page.goto(`${origin}${path}`);
  await page.waitForFunction(() => (window as unknown as { done?: boolean }).done === true);
  await page.goto('about:blank');
}

async function sessionsOf(p: Awaited<ReturnType<typeof makeProject>>) {
  await drained(ctx);
  const docs = await ctx.runtime.stores.sessions.releases.find({ project_id: Number(p.project.id) }).toArray();
  return docs.map((d) => ({ release: d.release, sessions: d.sessions }));
}

describe('@lookout/browser', () => {
  it('an unhandled error makes a crashed session, sent when the page is left', async () => {
    const p = await makeProject(ctx);
    await visit('/crash', { baseUrl: ctx.api, publicKey: p.publicKey, release: 'web@1.0.0' }, `setTimeout(() => { window.done = true; throw new Error('boom'); });`);
    await expect.poll(() => sessionsOf(p), { timeout: 20_000 }).toEqual([{ release: 'web@1.0.0', sessions: { ok: 0, errored: 0, abnormal: 0, crashed: 1 } }]);
  }, 60_000);

  it('a handled error makes an errored session', async () => {
    const p = await makeProject(ctx);
    await visit('/handled', { baseUrl: ctx.api, publicKey: p.publicKey, release: 'web@1.0.0' }, `try { JSON.parse('{'); } catch (e) { Lookout.captureException(e); } window.done = true;`);
    await expect.poll(() => sessionsOf(p), { timeout: 20_000 }).toEqual([{ release: 'web@1.0.0', sessions: { ok: 0, errored: 1, abnormal: 0, crashed: 0 } }]);
  }, 60_000);

  it('a page without a release sends no session', async () => {
    const p = await makeProject(ctx);
    await visit('/no-release', { baseUrl: ctx.api, publicKey: p.publicKey }, `Lookout.captureException(new Error('x')); window.done = true;`);
    await visit('/with-release', { baseUrl: ctx.api, publicKey: p.publicKey, release: 'web@2.0.0' }, `window.done = true;`);
    // the second page's session arriving shows the first page had its chance to send, and did not
    await expect.poll(() => sessionsOf(p), { timeout: 20_000 }).toEqual([{ release: 'web@2.0.0', sessions: { ok: 1, errored: 0, abnormal: 0, crashed: 0 } }]);
    // one session request in all reached Lookout for this project: the second page's
    expect(await ctx.runtime.stores.sessions.countOf(Number(p.project.id))).toBe(1);
  }, 60_000);

  it('an error is sent as an error event with its stack and the debug IDs sentry-cli registered on the page', async () => {
    const p = await makeProject(ctx);
    const debugId = '4a2c1d3e-5f60-4b7a-8c9d-0e1f2a3b4c5d';
    // what `sentry-cli sourcemaps inject` puts at the top of a bundle: its debug ID under a stack from that file
    const register = `(window._sentryDebugIds = window._sentryDebugIds || {})[new Error().stack] = '${debugId}';`;
    await visit('/errors', { baseUrl: ctx.api, publicKey: p.publicKey, release: 'web@3.0.0' }, `${register} function addToCart() { throw new TypeError('no cart'); } try { addToCart(); } catch (e) { Lookout.captureException(e); } window.done = true;`);
    const issues = async () => {
      await drained(ctx);
      return ctx.runtime.stores.issues.ofProject(Number(p.project.id));
    };
    await expect.poll(async () => (await issues()).length, { timeout: 20_000 }).toBe(1);
    const [issue] = await issues();
    expect(issue).toMatchObject({ title: 'TypeError: no cart', last_release: 'web@3.0.0' });
    const event = (await ctx.runtime.stores.events.body(issue!.latest_event!))!;
    const frames = (event.exception as { values: { stacktrace: { frames: Record<string, unknown>[] } }[] }).values[0]!.stacktrace.frames;
    expect(frames.at(-1)).toMatchObject({ function: 'addToCart', abs_path: `${origin}/errors`, lineno: expect.any(Number), colno: expect.any(Number) });
    expect(event.debug_meta).toEqual({ images: [{ type: 'sourcemap', code_file: `${origin}/errors`, debug_id: debugId }] });
  }, 60_000);
});
