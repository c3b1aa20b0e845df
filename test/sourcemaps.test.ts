/**
 * Source maps from the real `sentry-cli` (issue 52): a web shop (test/clients/sourcemap-app) bundled minified with
 * source maps by esbuild, its bundle given debug IDs by `sentry-cli sourcemaps inject` and uploaded by `sentry-cli
 * sourcemaps upload` (3.8, from npm) with an API token; Chromium loads it with the real @sentry/browser and a click
 * throws. The issue shows the original file, function, line and source; a second build with other minified names
 * joins the same issue; 2.x's release-based `releases files … upload-sourcemaps` maps an event of that release; an
 * event whose map is missing says why and is mapped once the map arrives; a token without project:releases is
 * refused.
 */
import esbuild from 'esbuild';
import { strToU8, zipSync } from 'fflate';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundProject, call, drained, type TestContext } from './helpers/context.ts';
import { accessible } from './helpers/axe.ts';
import { CLIENT_SOURCES, ensureNpm, runClient, sentryCliBinary } from './helpers/real-clients.ts';
import { until } from './helpers/until.ts';
import { entryOf } from '../src/queues/jobs/events.job.ts';
import type { EventDoc } from '../src/store/events.store.ts';
import { makeSourcemapsService } from '../src/services/sourcemaps.service.ts';
import { withWorkers } from './helpers/with-workers.ts';

let ctx: TestContext;
withWorkers(['events', 'sessions', 'maintenance'], (c) => (ctx = c), { FLUSH_INTERVAL_MS: '100' });

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const APP = path.join(CLIENT_SOURCES, 'sourcemap-app');
const FIXTURES = path.join(import.meta.dirname, 'fixtures', 'sourcemaps');
const DEBUG_ID = '016c3d50-7c1f-55fe-9f88-849ef2aa561a';
const PASSWORD = 'correct horse battery staple';
const SHOTS = process.env.LOOKOUT_SCREENSHOTS === 'docs' ? path.resolve('docs/dashboard') : path.resolve('test-results/dashboard');

let cli3 = '';
let cli2 = '';
let browserModules = '';
let work = '';
let browser: Browser;

beforeAll(async () => {
  cli3 = sentryCliBinary(ensureNpm('@sentry/cli', '@sentry/cli@3.8.0'));
  cli2 = sentryCliBinary(ensureNpm('sentry-cli-2', 'sentry-cli-2@npm:@sentry/cli@2.58.6'));
  browserModules = path.join(ensureNpm('@sentry/browser', '@sentry/browser@10'), 'node_modules');
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-sourcemaps-'));
  // the shop's sources beside its builds, as in a project: the maps name them `../src/…`
  fs.cpSync(APP, path.join(work, 'src'), { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
}, 600_000);
afterAll(async () => {
  await browser?.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** The shop bundled into `<work>/<name>/app.min.js` with its map: identifiers minified, or kept (another build). */
async function build(name: string, opts: { minifyIdentifiers: boolean }): Promise<string> {
  const out = path.join(work, name);
  await esbuild.build({
    entryPoints: [path.join(work, 'src', 'main.js')],
    bundle: true,
    format: 'iife',
    minifyWhitespace: true,
    minifySyntax: true,
    minifyIdentifiers: opts.minifyIdentifiers,
    sourcemap: true,
    outfile: path.join(out, 'app.min.js'),
    nodePaths: [browserModules],
    logLevel: 'silent',
  });
  return out;
}

/** A project, a member of its organisation and an API token of theirs with `scopes`; sentry-cli's environment. */
async function project(scopes = ['project:releases']) {
  const p = await boundProject(ctx);
  const org = Number(p.org.id);
  const email = `ci-${p.id}@shop.test`;
  await ctx.runtime.accounts.addUser({ org, email, role: 'member', password: PASSWORD });
  const { token } = await ctx.runtime.tokens.create({ email, org }, { name: 'ci', scopes });
  const orgSlug = (await ctx.runtime.admin.showOrg(org)).slug!;
  const env = { ...process.env, SENTRY_URL: ctx.api, SENTRY_AUTH_TOKEN: token, SENTRY_ORG: orgSlug, SENTRY_PROJECT: p.project.slug!, SENTRY_LOG_LEVEL: 'warn' };
  const dsn = `http://${p.publicKey}@${new URL(ctx.api).host}/${p.id}`;
  return { ...p, email, token, orgSlug, env, dsn };
}

/** The dashboard in Chromium, signed in as `email`. */
async function dashboard(email: string) {
  const tab = await (await browser.newContext({ viewport: { width: 1280, height: 860 } })).newPage();
  tab.on('dialog', (dialog) => void dialog.accept());
  await tab.goto(`${ctx.api}/sign-in`);
  await tab.getByLabel('Email').fill(email);
  await tab.getByLabel('Password').fill(PASSWORD);
  await tab.getByRole('button', { name: 'Sign in' }).click();
  await tab.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
  return tab;
}

/** Serves a build's folder and opens it in Chromium; clicking "Add to cart" reports an error. Its event id. */
async function throwIn(dir: string, dsn: string, query: Record<string, string> = {}): Promise<string> {
  const server = http.createServer((req, res) => {
    const name = path.basename(new URL(req.url!, 'http://x').pathname);
    const file = path.join(dir, name);
    if (!name || !fs.existsSync(file)) return res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>shop</title><button id="add">Add to cart</button><script src="/app.min.js"></script>');
    res.writeHead(200, { 'content-type': file.endsWith('.js') ? 'text/javascript' : 'application/json' }).end(fs.readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const tab = await browser.newPage();
  try {
    const search = new URLSearchParams({ dsn, ...query });
    await tab.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/?${search}`);
    await tab.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true, undefined, { timeout: 20_000 });
    await tab.click('#add');
    await tab.waitForFunction(() => (window as unknown as { done?: boolean }).done === true, undefined, { timeout: 20_000 });
    return await tab.evaluate(() => (window as unknown as { eventId: string }).eventId);
  } finally {
    await tab.close();
    server.close();
  }
}

/** The stored event of `eventId` once its job has run, with its issue. */
async function eventOf(p: Awaited<ReturnType<typeof project>>, eventId: string) {
  await until(async () => ((await p.get('/issues')).body.issues as unknown[]).length > 0, 30_000);
  await drained(ctx);
  for (const issue of (await p.get('/issues')).body.issues as { id: string }[]) {
    const found = await p.get(`/issues/${issue.id}/events/${eventId}`);
    if (found.status === 200) return { issue: (await p.get(`/issues/${issue.id}`)).body, event: found.body.event };
  }
  throw new Error(`event ${eventId} is in no issue`);
}

const crashFrame = (event: any) => event.exception.values.at(-1).stacktrace.frames.at(-1);
const rawCrashFrame = (event: any) => event.exception.values.at(-1).raw_stacktrace.frames.at(-1);

describe('source maps uploaded by sentry-cli', () => {
  it('sourcemaps inject + upload (3.8, debug IDs): the issue shows the original file, function, line and source; another build joins it', async () => {
    const p = await project();
    const first = await build('first', { minifyIdentifiers: true });
    await runClient(cli3, ['sourcemaps', 'inject', first], { env: p.env });
    await runClient(cli3, ['sourcemaps', 'upload', first], { env: p.env });
    const bundles = (await call(ctx, 'GET', `/api/dashboard/projects/${p.id}/sourcemaps`, { headers: { authorization: `Bearer ${(await ctx.runtime.tokens.create({ email: `ci-${p.id}@shop.test`, org: Number(p.org.id) }, { name: 'read', scopes: ['project:read'] })).token}` } })).body;
    expect(bundles.bundles).toHaveLength(1);
    expect(bundles.bundles[0].files.map((f: { url: string }) => f.url).sort()).toEqual(['~/app.min.js', '~/app.min.js.map']);

    const { issue, event } = await eventOf(p, await throwIn(first, p.dsn));
    expect(crashFrame(event)).toMatchObject({
      filename: '/src/cart.js',
      function: 'addToCart',
      lineno: 4,
      context_line: expect.stringContaining('throw new Error(`cannot add ${item.name} without a sku`)'),
      data: expect.objectContaining({ symbolicated: true, resolved_with: 'debug-id' }),
    });
    expect(crashFrame(event).pre_context.join('\n')).toContain('if (!item.sku)');
    expect(rawCrashFrame(event).filename).toMatch(/\/app\.min\.js$/);
    expect(issue.culprit).toMatch(/cart\.js in addToCart$/);

    // the issue page: the original frame with its source line highlighted, the minified frames behind a toggle
    const tab = await dashboard(p.email);
    fs.mkdirSync(SHOTS, { recursive: true });
    await tab.goto(`${ctx.api}/projects/${p.id}/issues/${issue.id}`);
    await tab.getByRole('heading', { level: 1, name: /cannot add desk lamp without a sku/ }).waitFor();
    const crash = tab.locator('li.frame', { hasText: 'cart.js in addToCart at line 4' }).first();
    await expect.poll(() => crash.locator('li.current').textContent()).toContain('throw new Error(`cannot add ${item.name} without a sku`)');
    expect(await crash.textContent()).toContain('Mapped through ~/app.min.js.map (by debug ID)');
    await accessible('an issue mapped through source maps', tab);
    await tab.screenshot({ path: path.join(SHOTS, 'issue-sourcemapped.png'), fullPage: true });
    await tab.getByRole('button', { name: 'Show the minified frames' }).first().click();
    await tab.locator('li.frame', { hasText: /app\.min\.js in \w+ at line \d+/ }).first().waitFor();

    // Settings → Source maps: the bundle and its files
    await tab.goto(`${ctx.api}/projects/${p.id}`);
    await tab.getByRole('heading', { level: 2, name: 'Source maps' }).waitFor();
    const row = tab.locator('tr[data-bundle]');
    await row.getByText('2 files').click();
    await row.getByText('~/app.min.js.map').waitFor();
    expect(await tab.getByText(`project=${p.project.slug}`).count()).toBeGreaterThan(0);
    await accessible('settings with source maps', tab);
    await tab.screenshot({ path: path.join(SHOTS, 'settings-sourcemaps.png'), fullPage: true });
    await tab.context().close();

    // the same source with its identifiers kept: other minified names and columns, the same issue
    const second = await build('second', { minifyIdentifiers: false });
    await runClient(cli3, ['sourcemaps', 'inject', second], { env: p.env });
    await runClient(cli3, ['sourcemaps', 'upload', '--release', 'shop@2.0.0', second], { env: p.env });
    const again = await eventOf(p, await throwIn(second, p.dsn));
    expect(rawCrashFrame(again.event).function).not.toBe(rawCrashFrame(event).function);
    expect(again.issue.id).toBe(issue.id);
    expect((await p.get(`/issues/${issue.id}`)).body.event_count).toBe(2);
  }, 180_000);

  it("2.x's release-based upload (releases new, files … upload-sourcemaps, finalize) maps an event of that release by its URL", async () => {
    const p = await project();
    const dir = await build('legacy', { minifyIdentifiers: true }); // no debug IDs: found by URL in the release
    const release = `shop@2.${p.id}.0`;
    await runClient(cli2, ['releases', 'new', release], { env: p.env });
    await runClient(cli2, ['releases', 'files', release, 'upload-sourcemaps', '--url-prefix', '~/', dir], { env: p.env });
    const finalized = await runClient(cli2, ['releases', 'finalize', release], { env: p.env });
    expect(finalized).toContain(`Finalized release ${release}`);
    const { event } = await eventOf(p, await throwIn(dir, p.dsn, { release }));
    expect(crashFrame(event)).toMatchObject({ function: 'addToCart', lineno: 4, data: expect.objectContaining({ symbolicated: true, resolved_with: 'release' }) });
  }, 180_000);

  it('an event whose map is missing says why, and is mapped once the map is uploaded (by 2.x)', async () => {
    const p = await project();
    const dir = await build('late', { minifyIdentifiers: true });
    await runClient(cli3, ['sourcemaps', 'inject', dir], { env: p.env });
    const eventId = await throwIn(dir, p.dsn);
    const { event } = await eventOf(p, eventId);
    const error = rawCrashFrame(event) && crashFrame(event).data.sourcemap_error;
    expect(error).toMatchObject({ reason: 'debug_id_not_found', message: expect.stringContaining('no uploaded source map has debug ID') });

    await runClient(cli2, ['sourcemaps', 'upload', dir], { env: p.env }); // 2.x, by debug ID
    await until(async () => (await eventOf(p, eventId)).event.exception.values.at(-1).stacktrace.frames.at(-1).data?.symbolicated === true, 30_000);
    expect(crashFrame((await eventOf(p, eventId)).event)).toMatchObject({ function: 'addToCart', lineno: 4 });
  }, 180_000);

  it('a job delivered again groups its events as the first delivery did, though a map arrived between', async () => {
    const p = await project();
    // the event @sentry/browser captured for the fixture bundle (src/domain/sourcemaps.test.ts), sent before its map
    const event = { ...JSON.parse(fs.readFileSync(path.join(FIXTURES, 'browser-event.json'), 'utf8')), event_id: crypto.randomBytes(16).toString('hex') };
    const sent = await call(ctx, 'POST', `/api/${p.id}/store/?sentry_key=${p.publicKey}`, { body: event });
    expect(sent.status).toBe(200);
    const first = await eventOf(p, event.event_id);
    expect(crashFrame(first.event).data.sourcemap_error.reason).toBe('debug_id_not_found');

    // the bundle, uploaded as sentry-cli does it: a gzipped chunk named by its SHA-1, then the assembly
    const zip = Buffer.from(
      zipSync({
        'manifest.json': strToU8(JSON.stringify({ files: { 'files/_/_/app.min.js': { type: 'minified_source', url: '~/app.min.js', headers: { 'debug-id': DEBUG_ID, sourcemap: 'app.min.js.map' } }, 'files/_/_/app.min.js.map': { type: 'source_map', url: '~/app.min.js.map', headers: { 'debug-id': DEBUG_ID } } }, debug_id: crypto.randomUUID() })),
        'files/_/_/app.min.js': fs.readFileSync(path.join(FIXTURES, 'app.min.js')),
        'files/_/_/app.min.js.map': fs.readFileSync(path.join(FIXTURES, 'app.min.js.map')),
      }),
    );
    const sha1 = crypto.createHash('sha1').update(zip).digest('hex');
    const auth = { authorization: `Bearer ${p.token}` };
    const form = new FormData();
    form.append('file_gzip', new Blob([zlib.gzipSync(zip)]), sha1);
    expect((await fetch(`${ctx.api}/api/0/organizations/${p.orgSlug}/chunk-upload/`, { method: 'POST', headers: auth, body: form })).status).toBe(200);
    const assembled = await call(ctx, 'POST', `/api/0/organizations/${p.orgSlug}/artifactbundle/assemble/`, { headers: auth, body: { checksum: sha1, chunks: [sha1], projects: [p.project.slug] } });
    expect(assembled.body).toEqual({ state: 'created', missingChunks: [] });
    await until(async () => crashFrame((await eventOf(p, event.event_id)).event).data?.symbolicated === true, 30_000);
    expect((await eventOf(p, event.event_id)).issue.id).toBe(first.issue.id); // mapped again, in the issue it was counted in

    // the job's event delivered again, as the API wrote it (the minified fingerprint): grouped as the first time
    const doc = (await ctx.runtime.stores.events.getMany([`${p.id}:${event.event_id}`]))[0] as EventDoc;
    const entry = { ...entryOf(doc), fingerprint: 'the-api-fingerprint', js_frames: true as const };
    await ctx.runtime.symbolication.apply(p.id, [entry]);
    expect(entry.fingerprint).toBe(doc.fingerprint);
    expect((await p.get(`/issues/${first.issue.id}`)).body.event_count).toBe(1);
  }, 120_000);

  it("a project keeps its newest bundles within its share, and none past its retention; chunks no bundle uses go", async () => {
    const p = await project();
    const org = (await ctx.runtime.stores.orgs.get(Number(p.org.id)))!;
    // a share of one byte: each new bundle leaves only itself
    const small = makeSourcemapsService({ stores: ctx.runtime.stores, limits: { projectBytes: 1, bundleBytes: 10 * 1024 * 1024 }, log: ctx.runtime.log, remap: async () => {} });
    const upload = async (n: number) => {
      const zip = Buffer.from(zipSync({ 'manifest.json': strToU8(JSON.stringify({ files: { 'files/a.js': { type: 'minified_source', url: `~/a${n}.js`, headers: {} } }, debug_id: crypto.randomUUID() })), 'files/a.js': strToU8(`var a${n};`) }));
      const sha1 = crypto.createHash('sha1').update(zip).digest('hex');
      await small.addChunks(org._id, [{ name: sha1, data: zip, gzip: false }], new Date());
      expect(await small.assemble(org, { checksum: sha1, chunks: [sha1], projects: [String(p.id)] }, new Date())).toEqual({ state: 'created', missingChunks: [] });
      return sha1;
    };
    await upload(1);
    const newest = await upload(2);
    const listed = await small.list(p.id);
    expect(listed.bundles.map((b) => b.files[0]!.url)).toEqual(['~/a2.js']);
    // the first bundle's chunk is no longer used; retention takes it after an hour, and the second bundle past 90 days
    const later = new Date(Date.now() + 2 * 3_600_000);
    expect(await small.expire(later, 90)).toMatchObject({ sourcemap_bundles: 0, sourcemap_chunks: expect.any(Number) });
    expect(await ctx.runtime.stores.sourcemaps.missingChunks([`${org._id}:${newest}`])).toEqual([]);
    // (the other tests' bundles in this database go too)
    expect((await small.expire(new Date(Date.now() + 91 * 86_400_000), 90)).sourcemap_bundles).toBeGreaterThanOrEqual(1);
    expect((await small.list(p.id)).bundles).toEqual([]);
  }, 60_000);

  it('a token without project:releases is refused, and sentry-cli says so', async () => {
    const p = await project(['project:read']);
    const dir = await build('refused', { minifyIdentifiers: true });
    await expect(runClient(cli3, ['sourcemaps', 'upload', dir], { env: p.env })).rejects.toThrow(/project:releases|403/);
    const answer = await call(ctx, 'GET', `/api/0/organizations/${p.orgSlug}/chunk-upload/`, { headers: { authorization: `Bearer ${p.token}` } });
    expect([answer.status, answer.body.reason]).toEqual([403, 'scope_required']);
    const other = await call(ctx, 'GET', `/api/0/organizations/not-${p.orgSlug}/chunk-upload/`, { headers: { authorization: `Bearer ${p.token}` } });
    expect(other.status).toBe(403);
  }, 60_000);
});
