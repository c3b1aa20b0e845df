#!/usr/bin/env node
// Behind `npm start` and `npm test`: makes a fresh clone runnable with no other
// step. Installs npm dependencies when node_modules is missing or older than
// package-lock.json, then hands over. Plain JavaScript: it runs before any
// dependency exists.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

/**
 * The dashboard test drives Debian's Chromium (no browser is downloaded from
 * the network). A fresh machine lacks it: install it when we may (root and
 * apt-get), else say what is missing; the test then fails with that reason.
 */
function ensureChromium() {
  const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
  if (fs.existsSync(chromium)) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !fs.existsSync('/usr/bin/apt-get')) {
    process.stderr.write(`lookout: ${chromium} is missing; install Debian's chromium package for the dashboard test\n`);
    return;
  }
  process.stderr.write('lookout: installing Debian chromium for the dashboard test…\n');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const apt = (args) => spawnSync('apt-get', args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env }).status;
  if (apt(['install', '-y', '--no-install-recommends', 'chromium']) !== 0) {
    apt(['update']);
    apt(['install', '-y', '--no-install-recommends', 'chromium']);
  }
}

/** The web dashboard is built from src/web into dist/web when missing or older than its sources. */
function buildWeb() {
  const status = run(process.execPath, [path.join(root, 'scripts', 'build-web.mjs'), '--if-stale']);
  if (status !== 0) process.exit(status);
}

/** The server is compiled from its sources into dist/server when missing or older than them. */
function buildServer() {
  const status = run(process.execPath, [path.join(root, 'scripts', 'build-server.mjs'), '--if-stale']);
  if (status !== 0) process.exit(status);
}

switch (mode) {
  case 'start':
    buildWeb();
    buildServer();
    // This process becomes the service (argv already reads `… start [args]`), so the PID that npm (or a
    // process manager) started is the one that handles SIGTERM and SIGINT and stops everything it started. It runs
    // the compiled server, its stack traces mapped to the sources.
    process.setSourceMapsEnabled(true);
    await import(pathToFileURL(path.join(root, 'dist', 'server', 'lookout.mjs')).href);
    break;
  case 'test': {
    ensureChromium();
    buildWeb();
    // Build the embedded FerretDB before vitest starts, so its first build is not timed.
    const prepared = run(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'prepare-stores.ts')]);
    if (prepared !== 0) process.exit(prepared);
    // The SDK packages' tests import them by name, built, as their users do.
    const built = run('npm', ['run', 'build:packages']);
    if (built !== 0) process.exit(built);
    process.exitCode = run(process.execPath, [path.join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...args]);
    break;
  }
  case 'bench': {
    // npm run bench:<name>: bench/<name>.ts; it starts its own stores (or uses REDIS_URL / MONGODB_URL).
    const [name, ...rest] = args;
    const prepared = run(process.execPath, ['--import', 'tsx', path.join(root, 'scripts', 'prepare-stores.ts')]);
    if (prepared !== 0) process.exit(prepared);
    process.exitCode = run(process.execPath, ['--import', 'tsx', path.join(root, 'bench', `${name}.ts`), ...rest]);
    break;
  }
  default:
    process.stderr.write('usage: bootstrap.mjs start|test|bench <name> [args]\n');
    process.exit(2);
}
