/**
 * Upgrades (issue 71): the newest release (docs/releases.md) started on a fresh data folder, given an
 * organisation, a project with a bound installation, errors and sessions, and stopped; then this build started on
 * the same folder: everything readable, the installation still bound, every migration recorded.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '../src/embedded/process.ts';
import { readInstance } from '../src/embedded/instance.ts';
import { MIGRATIONS } from '../src/store/migrations/index.ts';
import { stopChild } from './helpers/process.ts';
import { until } from './helpers/until.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const CACHE = path.join(ROOT, '.cache');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-upgrade-'));
const OLD = path.join(tmp, 'release');
const children: ChildProcess[] = [];
afterAll(async () => {
  await Promise.all(children.map((c) => stopChild(c, 'SIGKILL')));
  execFileSync('git', ['worktree', 'remove', '--force', OLD], { cwd: ROOT, stdio: 'ignore' });
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** The newest release: the last row of docs/releases.md's table. */
function newestRelease(): { tag: string; commit: string } {
  const rows = [...fs.readFileSync(path.join(ROOT, 'docs', 'releases.md'), 'utf8').matchAll(/^\| (v\d+\.\d+\.\d+) \| ([0-9a-f]{40}) \|/gm)];
  const last = rows.at(-1);
  if (!last) throw new Error('docs/releases.md names no release');
  return { tag: last[1]!, commit: last[2]! };
}

/** `lookout start` from `root`'s sources on `dataDir`; resolves with the API's address once it listens. */
async function start(root: string, dataDir: string) {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    LOOKOUT_DATA_DIR: dataDir,
    LOOKOUT_CACHE_DIR: CACHE,
    LOG_LEVEL: 'warn',
    FLUSH_INTERVAL_MS: '100',
    PORT: String(await freePort()),
    LOOKOUT_EMBEDDED_REDIS_PORT: String(await freePort()),
    LOOKOUT_EMBEDDED_MONGODB_PORT: String(await freePort()),
  };
  const child = spawn(process.execPath, [path.join(root, 'bin', 'lookout.mjs'), 'start'], { cwd: root, env });
  children.push(child);
  let output = '';
  const api = await new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /API listening on (http:\/\/\S+)/.exec(output);
      if (m) resolve(m[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited with ${code} before listening:\n${output}`)));
  });
  const admin = (...args: string[]) => JSON.parse(execFileSync(process.execPath, [path.join(root, 'bin', 'lookout.mjs'), 'admin', ...args], { cwd: root, env, encoding: 'utf8' })) as Record<string, unknown>;
  return { child, api, admin, output: () => output };
}

async function call(api: string, method: string, route: string, key: string, instance: string | null, body?: unknown) {
  const headers: Record<string, string> = { 'x-service-key': key, 'content-type': 'application/json' };
  if (instance) headers['x-service-instance'] = instance;
  const res = await fetch(`${api}${route}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, body: (await res.json().catch(() => null)) as Record<string, unknown> };
}

it('a store written by the newest release is read by this build: data, binding and migrations', { timeout: 300_000 }, async () => {
  const release = newestRelease();
  execFileSync('git', ['worktree', 'add', '--detach', OLD, release.commit], { cwd: ROOT, stdio: 'ignore' });
  // the release's sources run on this checkout's dependencies (its package.json is the same but for the version)
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(OLD, 'node_modules'), 'dir');
  const dataDir = path.join(tmp, 'data');

  const old = await start(OLD, dataDir);
  const org = old.admin('org', 'create', '--name', 'Acme');
  const project = old.admin('project', 'create', '--org', String(org.id), '--name', 'Shop');
  const secret = project.secret_key as string;
  const instance = 'inst-upgrade-0001';
  expect((await call(old.api, 'POST', '/api/v1/sdk/activate', secret, null, { instance_id: instance })).status).toBeLessThan(300);
  for (let i = 0; i < 3; i++) {
    const sent = await call(old.api, 'POST', '/api/v1/events', secret, instance, { event_id: `${'a'.repeat(31)}${i}`, timestamp: new Date().toISOString(), release: 'shop@1.0.0', exception: { values: [{ type: 'UpgradeError', value: 'before the upgrade' }] } });
    expect(sent.status).toBe(202);
  }
  const sessions = await call(old.api, 'POST', '/api/v1/sessions', project.public_key as string, null, { sessions: Array.from({ length: 5 }, (_, i) => ({ sid: `upgrade-session-${i}`, release: 'shop@1.0.0', status: 'ok', started: new Date().toISOString() })) });
  expect(sessions.status).toBe(202);
  const listed = async (api: string) => (await call(api, 'GET', '/api/v1/issues', secret, instance)).body.issues as { id: string; title: string; event_count: number }[];
  await until(async () => (await listed(old.api))[0]?.event_count === 3, 60_000, 200);
  const releases = async (api: string) => (await call(api, 'GET', '/api/v1/releases', secret, instance)).body;
  await until(async () => JSON.stringify(await releases(old.api)).includes('shop@1.0.0'), 60_000, 200);
  const before = { issues: await listed(old.api), releases: await releases(old.api) };
  expect(await stopChild(old.child, 'SIGTERM')).toBe(0);

  const now = await start(ROOT, dataDir);
  expect(await listed(now.api)).toEqual(before.issues);
  expect(await releases(now.api)).toEqual(before.releases);
  // the installation is still bound: its requests are taken, another installation is refused
  expect((await call(now.api, 'POST', '/api/v1/events', secret, instance, { event_id: 'b'.repeat(32), timestamp: new Date().toISOString(), exception: { values: [{ type: 'UpgradeError', value: 'before the upgrade' }] } })).status).toBe(202);
  expect((await call(now.api, 'POST', '/api/v1/sdk/activate', secret, null, { instance_id: 'another-installation' })).status).toBe(409);
  await until(async () => (await listed(now.api))[0]?.event_count === 4, 60_000, 200);
  expect((now.admin('project', 'list').projects as { name: string }[]).map((p) => p.name)).toEqual(['Shop']);
  // every migration recorded once
  const mongo = new MongoClient(readInstance(dataDir)!.mongodb_url!);
  try {
    const recorded = await mongo.db('lookout').collection('migrations').find({}).toArray();
    expect(recorded.map((m) => m._id).sort()).toEqual(MIGRATIONS.map((m) => m.name).sort());
  } finally {
    await mongo.close();
  }
  expect(await stopChild(now.child, 'SIGTERM')).toBe(0);
});
