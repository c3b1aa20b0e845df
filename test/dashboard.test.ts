/**
 * The queue dashboard: off (404) without ADMIN_PASSWORD, 401 without the
 * credential, and with it a real headless Chromium (Debian's `chromium`,
 * driven by playwright-core) renders bull-board listing every Lookout queue.
 */
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { QUEUE_NAMES } from '../config/index.ts';
import { call, startTestContext, type TestContext } from './helpers/context.ts';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const credential = { username: 'ops', password: 'a-long-test-password' };

let on: TestContext;
let off: TestContext;
let browser: Browser | undefined;
beforeAll(async () => {
  on = await startTestContext({ ADMIN_USERNAME: credential.username, ADMIN_PASSWORD: credential.password });
  off = await startTestContext();
  await on.runtime.queues.enqueue('maintenance.retention', {});
});
afterAll(async () => {
  await browser?.close();
  await on?.close();
  await off?.close();
});

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

it('is off, not open, when no admin credential is configured', async () => {
  const res = await call(off, 'GET', '/admin/queues');
  expect(res.status).toBe(404);
  expect(res.body).toMatchObject({ reason: 'dashboard_disabled' });
  expect((await call(off, 'GET', '/admin/queues/api/queues')).status).toBe(404);
});

it('asks for the credential and refuses a wrong one', async () => {
  const attempts: Record<string, string>[] = [{}, { authorization: basic(credential.username, 'wrong-password') }, { authorization: basic('admin', credential.password) }, { authorization: 'Bearer x' }];
  for (const headers of attempts) {
    const res = await call(on, 'GET', '/admin/queues/api/queues', { headers });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ reason: 'unauthorized' });
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
  }
  const ok = await call(on, 'GET', '/admin/queues/api/queues', { headers: { authorization: basic(credential.username, credential.password) } });
  expect(ok.status).toBe(200);
  expect(ok.body.queues.map((q: { name: string }) => q.name).sort()).toEqual([...QUEUE_NAMES].sort());
});

it('lists every queue in headless Chromium', async () => {
  expect(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (.ci/run does)`).toBe(true);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // no sandbox as root in CI; no background traffic on a closed network (Playwright gives it a fresh profile)
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ httpCredentials: credential });
  const response = await page.goto(`${on.api}/admin/queues`);
  expect(response?.status()).toBe(200);
  for (const queue of QUEUE_NAMES) {
    await page.getByText(queue, { exact: true }).first().waitFor({ timeout: 20_000 });
  }
  expect(await page.title()).toContain('Lookout queues');
}, 60_000);
