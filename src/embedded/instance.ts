/**
 * One Lookout per data folder. `lookout start` claims `<dataDir>/lookout.json`
 * (created exclusively) before it touches a store, and records in it where
 * its API and stores listen; the admin CLI reads it to find the running
 * instance. A claim whose process no longer runs is stale and is taken over;
 * a live one is never touched.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** A start-up failure the user can act on: printed as one line, no stack trace. */
export class StartError extends Error {
  override name = 'StartError';
}

export interface InstanceRecord {
  pid: number;
  /** the claiming process' command line: a reused PID running something else is not taken for Lookout */
  cmdline: string;
  started_at: string;
  api_url?: string;
  redis_url?: string;
  mongodb_url?: string;
}

export function instanceFile(dataDir: string): string {
  return path.join(dataDir, 'lookout.json');
}

function readProc(pid: number | 'self', what: 'cmdline' | 'exe' | 'cwd'): string | null {
  try {
    return what === 'cmdline'
      ? fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+$/, '').replaceAll('\0', ' ')
      : fs.readlinkSync(`/proc/${pid}/${what}`).replace(/ \(deleted\)$/, '');
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The instance running on this data folder, or null when none runs (a stale file is ignored). */
export function readInstance(dataDir: string): InstanceRecord | null {
  let record: InstanceRecord;
  try {
    record = JSON.parse(fs.readFileSync(instanceFile(dataDir), 'utf8')) as InstanceRecord;
  } catch {
    return null;
  }
  if (!Number.isInteger(record.pid) || !alive(record.pid)) return null;
  // Without /proc (not Linux) a live PID is trusted.
  const cmdline = readProc(record.pid, 'cmdline');
  return cmdline === null || cmdline === record.cmdline ? record : null;
}

export interface InstanceClaim {
  /** adds where the API and stores listen */
  record(where: Pick<InstanceRecord, 'api_url' | 'redis_url' | 'mongodb_url'>): void;
  release(): void;
}

/** Claims the data folder for this process, or throws a StartError naming the instance that holds it. */
export function claimInstance(dataDir: string): InstanceClaim {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = instanceFile(dataDir);
  let record: InstanceRecord = { pid: process.pid, cmdline: readProc('self', 'cmdline') ?? '', started_at: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, `${JSON.stringify(record)}\n`, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      const running = readInstance(dataDir);
      if (running) {
        throw new StartError(
          `Lookout already runs in ${path.resolve(dataDir)} (PID ${running.pid}${running.api_url ? `, ${running.api_url}` : ''}); ` +
            'stop it first, or set LOOKOUT_DATA_DIR to another folder',
        );
      }
      fs.rmSync(file, { force: true }); // stale: its process is gone
    }
  }
  return {
    record(where) {
      record = { ...record, ...where };
      fs.writeFileSync(file, `${JSON.stringify(record)}\n`);
    },
    release() {
      if (readInstance(dataDir)?.pid === process.pid) fs.rmSync(file, { force: true });
    },
  };
}

/**
 * Whether `pid` is one of Lookout's own store processes for `dir`: it runs
 * `binary` and names `dir` on its command line or works in it. Only then may
 * a stale PID file's process be stopped. Without /proc nothing is trusted.
 */
export function isOwnStore(pid: number, binary: string, dir: string): boolean {
  const exe = readProc(pid, 'exe');
  if (exe === null) return false;
  let expected = binary;
  try {
    expected = fs.realpathSync(binary);
  } catch {
    /* compared as given */
  }
  if (exe !== expected) return false;
  const absolute = path.resolve(dir);
  return readProc(pid, 'cwd') === absolute || (readProc(pid, 'cmdline') ?? '').includes(absolute);
}

/** Throws a StartError naming `variable` when something already listens on host:port. */
export function assertPortFree(host: string, port: number, variable: string): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') reject(portTaken(host, port, variable));
      else if (err.code === 'EACCES') reject(new StartError(`port ${port} on ${host} needs privileges this user lacks; set ${variable} to a port above 1023`));
      else reject(err);
    });
    server.listen(port, host, () => server.close(() => resolve()));
  });
}

export function portTaken(host: string, port: number, variable: string): StartError {
  return new StartError(`port ${port} on ${host} is taken by another program; set ${variable} to a free port`);
}
