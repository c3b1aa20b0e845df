/**
 * Scheduled backups (issue 71): the `maintenance.backup` job's work on a real store, the newest kept, each read back;
 * one that cannot be written notifies `backup.failed` to a real webhook that listens for it, and no other.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startWorkers } from '../workers/main.ts';
import { runScheduledBackup } from '../workers/digest/backups.ts';
import { verifyBackup } from '../src/backup/backup.ts';
import { makeProject, startTestContext, type TestContext } from './helpers/context.ts';
import { startReceiver, type Receiver } from './helpers/receiver.ts';
import { until } from './helpers/until.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-backups-'));
let ctx: TestContext;
let workers: Awaited<ReturnType<typeof startWorkers>>;
let receiver: Receiver;
beforeAll(async () => {
  ctx = await startTestContext({ WEBHOOK_ALLOW_PRIVATE: 'true', BACKUP_DIR: path.join(dir, 'kept'), BACKUP_KEEP: '2' });
  workers = await startWorkers(ctx.runtime, { queues: ['notifications'] });
  receiver = await startReceiver();
});
afterAll(async () => {
  await workers?.close();
  await ctx?.close();
  await receiver?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

it('keeps the newest BACKUP_KEEP backups, each read back whole', async () => {
  await makeProject(ctx);
  const made = [];
  for (let hour = 0; hour < 3; hour++) made.push(await runScheduledBackup(ctx.runtime, new Date(Date.UTC(2026, 10, 30, hour))));
  expect(made.map((m) => path.basename(m.file))).toEqual(['lookout-20261130T000000Z.backup', 'lookout-20261130T010000Z.backup', 'lookout-20261130T020000Z.backup']);
  expect(made[2]!.deleted).toEqual(['lookout-20261130T000000Z.backup']);
  expect(fs.readdirSync(path.join(dir, 'kept')).sort()).toEqual(['lookout-20261130T010000Z.backup', 'lookout-20261130T020000Z.backup']);
  expect((await verifyBackup(made[2]!.file, ctx.runtime.config.cacheDir)).collections.orgs).toBe(1);
});

it('a backup that fails leaves no file and notifies the channels listening for backup.failed', { timeout: 60_000 }, async () => {
  const listening = await makeProject(ctx);
  const deaf = await makeProject(ctx);
  const project = Number(listening.project.id);
  await ctx.runtime.notifications.add(project, { webhook: `${receiver.url}/hook/${project}`, on: ['backup.failed'] });
  await ctx.runtime.notifications.add(Number(deaf.project.id), { webhook: `${receiver.url}/hook/${deaf.project.id}` });
  // the folder cannot be made: a file stands in its place
  const blocked = path.join(dir, 'blocked');
  fs.writeFileSync(blocked, 'not a folder');
  const failing = { ...ctx.runtime, config: { ...ctx.runtime.config, backups: { ...ctx.runtime.config.backups, dir: path.join(blocked, 'backups') } } };
  await expect(runScheduledBackup(failing, new Date())).rejects.toThrow();
  await until(() => receiver.received.length > 0, 30_000);
  const [notice] = receiver.received;
  expect(notice!.path).toBe(`/hook/${project}`);
  expect(notice!.event).toBe('backup.failed');
  expect(notice!.body).toMatchObject({ event: 'backup.failed', dir: path.join(blocked, 'backups') });
  expect(String(notice!.body.reason)).toMatch(/ENOTDIR|EEXIST|not a directory/i);
  await new Promise((r) => setTimeout(r, 1000));
  expect(receiver.received).toHaveLength(1);
});
