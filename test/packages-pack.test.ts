/**
 * The SDK packages as they ship: `npm pack` in each package folder builds it
 * (prepack) and yields a tarball that installs, offline, in a project outside
 * this repository, and works there against a real Lookout.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeProject, startTestContext, type TestContext } from './helpers/context.ts';
import { runCommand } from './helpers/process.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-outside-'));
let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => {
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
  fs.writeFileSync(
    path.join(project, 'app.js'),
    `import { createClient } from '@lookout/node';
const lookout = createClient({ baseUrl: process.argv[2], secretKey: process.argv[3], instanceId: 'outside-app-01' });
const activation = await lookout.activate({ platform: 'test' });
await lookout.close();
console.log(JSON.stringify(activation.project));`,
  );
  // Not spawnSync: the API under test answers from this very process.
  const run = await runCommand(process.execPath, ['app.js', ctx.api, p.secret], { cwd: project });
  expect(run.code, run.stderr).toBe(0);
  expect(JSON.parse(run.stdout)).toEqual({ id: p.project.id, name: 'shop' });
}, 120_000);
