#!/usr/bin/env node
// Behind `npm start` and `npm test`: makes a fresh clone runnable with no other
// step. Installs npm dependencies when node_modules is missing or older than
// package-lock.json, then hands over. Plain JavaScript: it runs before any
// dependency exists.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const [mode, ...args] = process.argv.slice(2);

function run(command, commandArgs) {
  const result = spawnSync(command, commandArgs, { cwd: root, stdio: 'inherit' });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

const stamp = path.join(root, 'node_modules', '.package-lock.json');
const lock = path.join(root, 'package-lock.json');
if (!fs.existsSync(stamp) || fs.statSync(stamp).mtimeMs < fs.statSync(lock).mtimeMs) {
  process.stderr.write('lookout: installing npm dependencies…\n');
  // npm install, not npm ci: npm ci refuses a lock file whose optional platform packages
  // (msgpackr-extract for other systems) a registry mirror does not serve.
  const status = run('npm', ['install', '--no-audit', '--no-fund']);
  if (status !== 0) process.exit(status);
}

const bin = path.join(root, 'bin', 'lookout.mjs');
switch (mode) {
  case 'start':
    process.exit(run(process.execPath, [bin, 'start', ...args]));
  case 'test': {
    // Build the embedded FerretDB before vitest starts, so its first build is not timed.
    const prepared = run(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'prepare-stores.ts')]);
    if (prepared !== 0) process.exit(prepared);
    process.exit(run(process.execPath, [path.join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...args]));
  }
  case 'bench': {
    // npm run bench:<name>: bench/<name>.ts; it starts its own stores (or uses REDIS_URL / MONGODB_URL).
    const [name, ...rest] = args;
    const prepared = run(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'prepare-stores.ts')]);
    if (prepared !== 0) process.exit(prepared);
    process.exit(run(process.execPath, ['--import', 'tsx', path.join(root, 'bench', `${name}.ts`), ...rest]));
  }
  default:
    process.stderr.write('usage: bootstrap.mjs start|test|bench <name> [args]\n');
    process.exit(2);
}
