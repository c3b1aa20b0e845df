/**
 * Real third-party clients for the integration tests (issue 46), installed
 * by the tests themselves on a fresh machine: Debian packages with apt-get
 * (as root), npm packages into `.cache/clients/`, Go programs built with the
 * machine's Go toolchain through the module proxy. Each is installed once
 * and reused; a client that cannot be installed fails its test with why.
 */
import { execFile, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const execFileAsync = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLIENTS_DIR = path.join(root, '.cache', 'clients');
export const CLIENT_SOURCES = path.join(root, 'test', 'clients');

function run(command: string, args: string[], opts: SpawnSyncOptions = {}): { status: number; stdout: string; stderr: string } {
  const res = spawnSync(command, args, { encoding: 'utf8', timeout: 600_000, ...opts });
  if (res.error) return { status: 127, stdout: '', stderr: res.error.message };
  return { status: res.status ?? 1, stdout: String(res.stdout ?? ''), stderr: String(res.stderr ?? '') };
}

/** Debian packages, installed with apt-get when `present()` says they are missing. */
export function ensureDebian(packages: string[], present: () => boolean): void {
  if (present()) return;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let res = run('apt-get', ['install', '-y', '--no-install-recommends', ...packages], { env });
  if (res.status !== 0) {
    run('apt-get', ['update'], { env });
    res = run('apt-get', ['install', '-y', '--no-install-recommends', ...packages], { env });
  }
  if (!present()) throw new Error(`could not install ${packages.join(', ')} with apt-get (run as root): ${res.stderr.slice(-500)}`);
}

/** An npm package (with its dependencies) in a folder of its own; returns the folder holding its node_modules. */
export function ensureNpm(name: string, spec: string): string {
  const dir = path.join(CLIENTS_DIR, `npm-${name.replace(/^@/, '').replace(/[^a-z0-9]+/gi, '-')}`);
  const marker = path.join(dir, 'node_modules', ...name.split('/'), 'package.json');
  if (fs.existsSync(marker)) return dir;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `client-${path.basename(dir)}`, private: true }));
  const res = run('npm', ['install', '--no-audit', '--no-fund', '--no-save', spec], { cwd: dir });
  if (!fs.existsSync(marker)) throw new Error(`could not install ${spec} from npm: ${res.stderr.slice(-500)}`);
  return dir;
}

/** A Go program from test/clients/<name>/ built once into .cache/clients/<name> (modules from the proxy). */
export function goBuild(name: string): string {
  const out = path.join(CLIENTS_DIR, name);
  const source = path.join(CLIENT_SOURCES, name);
  const newest = Math.max(...fs.readdirSync(source).map((f) => fs.statSync(path.join(source, f)).mtimeMs));
  if (fs.existsSync(out) && fs.statSync(out).mtimeMs > newest) return out;
  fs.mkdirSync(CLIENTS_DIR, { recursive: true });
  const go = fs.existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
  const env = { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' };
  const res = run(go, ['build', '-o', out, '.'], { cwd: source, env });
  if (res.status !== 0) throw new Error(`could not build the Go client ${name}: ${res.stderr.slice(-800)}`);
  return out;
}

/**
 * Runs a client to its end, without blocking this process (the API under test may run in it); its output is
 * returned, and a failure says what it printed.
 */
export async function runClient(command: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<string> {
  try {
    const { stdout } = await execFileAsync(command, args, { env: opts.env, cwd: opts.cwd, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const e = err as { code?: unknown; stderr?: string; stdout?: string };
    throw new Error(`${command} ${args.join(' ')} exited ${String(e.code)}: ${(e.stderr ?? '').slice(-1500)}${(e.stdout ?? '').slice(-500)}`, { cause: err });
  }
}

/** The sentry-cli binary an npm package installed by ensureNpm ships (in its platform package). */
export function sentryCliBinary(dir: string): string {
  const platform = path.join(dir, 'node_modules', '@sentry', `cli-linux-${process.arch === 'arm64' ? 'arm64' : 'x64'}`, 'bin', 'sentry-cli');
  return fs.existsSync(platform) ? platform : path.join(dir, 'node_modules', '.bin', 'sentry-cli');
}

/** Runs a command to its end without blocking this process; its exit status and output, whatever the status. */
export async function runToExit(command: string, args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<{ status: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(command, args, { env: opts.env, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024 });
    return { status: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: unknown; stderr?: string; stdout?: string };
    return { status: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** Whether a command answers (its exit status 0). */
export function answers(command: string, args: string[]): boolean {
  return run(command, args, { timeout: 30_000 }).status === 0;
}
