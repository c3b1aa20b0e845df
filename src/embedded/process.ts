/** Child-process helpers shared by the embedded Redis and FerretDB. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { StartError } from './instance.ts';

export interface ManagedProcess {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** Finds a free TCP port on loopback (used by tests and benchmarks). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export function waitForPort(port: number, timeoutMs: number, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (child && child.exitCode !== null) {
        reject(new Error(`process exited with code ${child.exitCode} before listening on ${port}`));
        return;
      }
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`nothing listens on 127.0.0.1:${port} after ${timeoutMs} ms`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

/**
 * Stops a store process left behind by an earlier run that did not shut down
 * (its pid is kept in `pidFile`), so that its port is free again. Only a
 * process `isOwn` recognises is stopped: a PID file may name a process that
 * has since ended and whose PID now belongs to something else.
 */
export async function stopStale(pidFile: string, isOwn: (pid: number) => boolean): Promise<void> {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
  } catch {
    return;
  }
  fs.rmSync(pidFile, { force: true });
  if (!Number.isInteger(pid) || pid <= 1 || !isOwn(pid)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return; // already gone
  }
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone */
  }
}

export function spawnManaged(opts: {
  name: string;
  command: string;
  args: string[];
  port: number;
  url: string;
  pidFile?: string;
  logFile: string;
  timeoutMs?: number;
}): Promise<ManagedProcess> {
  fs.mkdirSync(path.dirname(opts.logFile), { recursive: true });
  const log = fs.openSync(opts.logFile, 'a');
  const child = spawn(opts.command, opts.args, { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  if (opts.pidFile && child.pid) fs.writeFileSync(opts.pidFile, String(child.pid));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    if (opts.pidFile) fs.rmSync(opts.pidFile, { force: true });
  };
  return waitForPort(opts.port, opts.timeoutMs ?? 30_000, child).then(
    () => ({ name: opts.name, url: opts.url, pid: child.pid!, stop }),
    async (err: Error) => {
      await stop();
      throw new StartError(`${opts.name} did not start: ${err.message} (its log: ${opts.logFile})`);
    },
  );
}
