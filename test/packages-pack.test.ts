/**
 * The SDK packages as they ship: `npm pack` in each package folder builds it
 * (prepack) and yields a tarball that installs, offline, in a project outside
 * this repository, and works there against a real Lookout: activation, and
 * isBlocked() following a decision from its own burst to its lift.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startWorkers } from '../workers/main.ts';
import { makeProject, startTestContext, type TestContext } from './helpers/context.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-outside-'));
let ctx: TestContext;
let workers: Awaited<ReturnType<typeof startWorkers>>;
beforeAll(async () => {
  ctx = await startTestContext({ FLUSH_INTERVAL_MS: '100' });
  workers = await startWorkers(ctx.runtime, { queues: ['events'] });
});
afterAll(async () => {
  await workers?.close();
  await ctx?.close();
  fs.rmSync(outside, { recursive: true, force: true });
});

function pack(name: 'node' | 'browser'): string {
  const dir = path.join(ROOT, 'packages', name);
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', outside], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const [info] = JSON.parse(out.slice(out.indexOf('['))) as { filename: string; files: { path: string }[] }[];
  expect(info!.files.map((f) => f.path)).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts']));
  return path.join(outside, info!.filename);
}

it('npm pack yields tarballs that install and work outside the repository', async () => {
  const tarballs = [pack('node'), pack('browser')];
  const project = path.join(outside, 'app');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  const install = spawnSync('npm', ['install', '--offline', '--no-audit', '--no-fund', ...tarballs], { cwd: project, encoding: 'utf8' });
  expect(install.status, install.stderr).toBe(0);
  expect(fs.existsSync(path.join(project, 'node_modules', '@lookout', 'browser', 'dist', 'lookout.min.js'))).toBe(true);

  const p = await makeProject(ctx);
  // The installation: activates, reports a burst of failed sign-ins, and watches isBlocked() turn true, then false
  // once the decision is lifted (by this test, when the app says it is blocked), never polling by itself.
  fs.writeFileSync(
    path.join(project, 'app.js'),
    `import { createClient } from '@lookout/node';
const lookout = createClient({ baseUrl: process.argv[2], secretKey: process.argv[3], instanceId: 'outside-app-01', decisionsPollSeconds: 1 });
const activation = await lookout.activate({ platform: 'test' });
const who = { actor: 'eve@outside.example', ip: '198.51.100.99' };
for (let i = 0; i < 5; i++) lookout.signInAttempt({ kind: 'login_failed', ...who });
await lookout.flush();
const becomes = async (want) => {
  for (let i = 0; i < 300 && lookout.isBlocked(who) !== want; i++) await new Promise((r) => setTimeout(r, 100));
  return lookout.isBlocked(who) === want;
};
console.log(JSON.stringify({ blocked: await becomes(true), decisions: lookout.decisions().map((d) => d.id) }));
const lifted = await becomes(false);
await lookout.close();
console.log(JSON.stringify({ project: activation.project, lifted }));`,
  );
  // Not spawnSync: the API under test answers from this very process.
  const child = spawn(process.execPath, ['app.js', ctx.api, p.secret], { cwd: project });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const lines: unknown[] = [];
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  child.stdout.on('data', (d) => {
    stdout += d;
    const done = stdout.split('\n').slice(0, -1);
    for (const line of done.slice(lines.length)) {
      const parsed = JSON.parse(line) as { blocked?: boolean; decisions?: string[] };
      lines.push(parsed);
      if (parsed.blocked) void ctx.runtime.decisions.lift(Number(p.project.id), parsed.decisions![0]!, new Date());
    }
  });
  expect(await exited, stderr).toBe(0);
  expect(lines).toEqual([{ blocked: true, decisions: [expect.stringMatching(/^d\d+$/)] }, { project: { id: p.project.id, name: 'shop' }, lifted: true }]);
}, 120_000);
