#!/usr/bin/env node
// Builds one SDK package (run from its folder by `npm run build` and `prepack`): the bundles with esbuild, the
// type declarations with tsc. Every file lands in dist/ by an atomic rename, so a test or a bundler reading
// dist/ while a build runs (npm test packs the packages while other tests import them) never sees half a file.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
const targets = {
  '@lookout/node': [{ format: 'esm', platform: 'node', target: 'node20', outfile: 'index.js' }],
  '@lookout/browser': [
    { format: 'esm', platform: 'browser', target: 'es2020', outfile: 'index.js' },
    { format: 'iife', platform: 'browser', target: 'es2020', outfile: 'lookout.min.js', minify: true, globalName: 'Lookout' },
  ],
}[pkg.name];
if (!targets) throw new Error(`build-package: no targets for ${pkg.name}`);

const staging = fs.mkdtempSync('.dist-');
try {
  for (const { outfile, ...options } of targets) {
    await build({ entryPoints: ['src/index.ts'], bundle: true, outfile: path.join(staging, outfile), logLevel: 'warning', ...options });
  }
  const tsc = spawnSync(process.execPath, [path.resolve('../../node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', staging], { stdio: 'inherit' });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  fs.mkdirSync('dist', { recursive: true });
  for (const file of fs.readdirSync(staging)) fs.renameSync(path.join(staging, file), path.join('dist', file));
} finally {
  fs.rmSync(staging, { recursive: true, force: true });
}
