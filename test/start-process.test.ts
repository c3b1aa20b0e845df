/**
 * `npm start` as a process manager or a user at a terminal meets it: the
 * real command as a subprocess, real embedded stores. It stops when its own
 * PID is signalled, one data folder holds one instance, a taken port is one
 * line, and the admin CLI finds the running instance with no variable set.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../src/embedded/process.ts';
import { BIN, stopChild } from './helpers/process.ts';
import { until } from './helpers/until.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const CACHE = path.resolve(ROOT, '.cache');
const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-process-'));
afterAll(() => fs.rmSync(tmpRoot, { recursive: true, force: true }));

const children: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => stopChild(c, 'SIGKILL')));
});

const BASE_ENV = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' };

/** Runs a command and collects its output; `ready` resolves when the output matches. */
function run(command: string, args: string[], opts: { cwd: string; env: Record<string, string> }, ready = /API listening on (http:\/\/\S+)/) {
  const child = spawn(command, args, { cwd: opts.cwd, env: { ...BASE_ENV, ...opts.env } });
  children.push(child);
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const matched = new Promise<RegExpMatchArray>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = output.match(ready);
      if (m) resolve(m);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then((code) => reject(new Error(`exited with ${code} before ready:\n${output}`)));
  });
  matched.catch(() => {});
  return { child, matched, exited, output: () => output };
}

/** Every process below `pid` (Linux /proc). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone meanwhile */
    }
  }
  const found: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of parents) {
      if (parent !== p) continue;
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] !== 'Z';
  } catch {
    return false;
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

async function ports() {
  return { PORT: await freePort(), LOOKOUT_EMBEDDED_REDIS_PORT: await freePort(), LOOKOUT_EMBEDDED_MONGODB_PORT: await freePort() };
}
const asEnv = (p: Record<string, number>) => Object.fromEntries(Object.entries(p).map(([k, v]) => [k, String(v)]));

function oneLine(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() && !l.startsWith('npm warn') && !l.startsWith('>'));
  expect(lines, text).toHaveLength(1);
  expect(text).not.toMatch(/^\s+at /m); // no stack trace
  return lines[0]!;
}

describe('npm start', () => {
  it('stops everything on SIGTERM to its PID; a second start leaves it alone; the admin CLI finds it with no variable set', async () => {
    // The data folder is `.data` under a folder the admin CLI then runs in, so it needs no variable at all.
    const home = fs.mkdtempSync(path.join(tmpRoot, 'home-'));
    const dataDir = path.join(home, '.data');
    const p = await ports();
    const first = run('npm', ['start'], { cwd: ROOT, env: { ...asEnv(p), LOOKOUT_DATA_DIR: dataDir, LOOKOUT_CACHE_DIR: CACHE, LOG_LEVEL: 'warn' } });
    const api = (await first.matched)[1]!;

    const admin = run(process.execPath, [BIN, 'admin', 'org', 'list'], { cwd: home, env: {} }, /\}\s*$/);
    expect(await admin.exited, admin.output()).toBe(0);
    expect(JSON.parse(admin.output())).toEqual({ orgs: [] });

    const second = run(process.execPath, [BIN, 'start'], { cwd: ROOT, env: { ...asEnv(await ports()), LOOKOUT_DATA_DIR: dataDir, LOOKOUT_CACHE_DIR: CACHE } });
    expect(await second.exited).toBe(1);
    expect(oneLine(second.output())).toMatch(new RegExp(`^lookout: Lookout already runs in ${dataDir} \\(PID \\d+, ${api}\\)`));
    expect((await fetch(`${api}/readyz`)).status).toBe(200);

    const family = descendants(first.child.pid!);
    expect(family.length).toBeGreaterThanOrEqual(4); // the service (under npm), its worker, redis-server, FerretDB
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    await until(() => family.every((pid) => !alive(pid)));
    for (const port of Object.values(p)) expect(await portFree(port)).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'lookout.json'))).toBe(false);
  }, 120_000);

  it('says in one line which variable to change when a port is taken, and leaves nothing running', async () => {
    const dataDir = fs.mkdtempSync(path.join(tmpRoot, 'ports-'));
    const taken = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => taken.once('listening', r));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      for (const variable of ['PORT', 'LOOKOUT_EMBEDDED_REDIS_PORT', 'LOOKOUT_EMBEDDED_MONGODB_PORT']) {
        const env = { ...asEnv(await ports()), [variable]: String(port), LOOKOUT_DATA_DIR: dataDir, LOOKOUT_CACHE_DIR: CACHE };
        const started = run(process.execPath, [BIN, 'start'], { cwd: ROOT, env });
        expect(await started.exited).toBe(1);
        expect(oneLine(started.output())).toBe(`lookout: port ${port} on 127.0.0.1 is taken by another program; set ${variable} to a free port`);
        expect(descendants(started.child.pid!)).toEqual([]);
        for (const [name, value] of Object.entries(env)) if (name.endsWith('PORT') && value !== String(port)) expect(await portFree(Number(value))).toBe(true);
        expect(fs.existsSync(path.join(dataDir, 'lookout.json'))).toBe(false);
      }
    } finally {
      taken.close();
    }
  }, 120_000);

  it('after a crash, stops the stores left behind, but never a process a stale PID file names that is not its own', async () => {
    const dataDir = fs.mkdtempSync(path.join(tmpRoot, 'crash-'));
    const env = { ...asEnv(await ports()), LOOKOUT_DATA_DIR: dataDir, LOOKOUT_CACHE_DIR: CACHE, LOG_LEVEL: 'warn' };
    const crashed = run(process.execPath, [BIN, 'start'], { cwd: ROOT, env });
    await crashed.matched;
    const orphans = descendants(crashed.child.pid!);
    crashed.child.kill('SIGKILL');
    await crashed.exited;
    // the worker notices its parent is gone; the stores stay behind, holding their ports
    const survivors = () => orphans.filter(alive);
    await until(() => survivors().length === 2);

    // a PID file that names someone else's process: that process must survive the next start
    const bystander = spawn('sleep', ['60']);
    children.push(bystander);
    fs.writeFileSync(path.join(dataDir, 'ferretdb', 'ferretdb.pid'), String(bystander.pid));
    const ferretOrphan = survivors().find((pid) => fs.readlinkSync(`/proc/${pid}/exe`).includes('ferretdb'))!;

    const restarted = run(process.execPath, [BIN, 'start'], { cwd: ROOT, env });
    const outcome = await Promise.race([restarted.matched.then(() => 'ready'), restarted.exited.then(() => 'exited')]);
    // the orphaned redis-server (its PID file is intact) was recognised and stopped; the bystander was not
    // touched, so the orphaned FerretDB still holds its port and the start says which variable to change
    expect(alive(bystander.pid!)).toBe(true);
    expect(outcome).toBe('exited');
    expect(oneLine(restarted.output())).toMatch(/LOOKOUT_EMBEDDED_MONGODB_PORT/);
    expect(orphans.filter(alive)).toEqual([ferretOrphan]);

    process.kill(ferretOrphan, 'SIGTERM');
    await until(() => !alive(ferretOrphan));
    const clean = run(process.execPath, [BIN, 'start'], { cwd: ROOT, env });
    await clean.matched;
    clean.child.kill('SIGTERM');
    const code = await clean.exited;
    expect(code, `a clean start stopped by SIGTERM exited ${code}:\n${clean.output()}`).toBe(0);
  }, 120_000);
});
