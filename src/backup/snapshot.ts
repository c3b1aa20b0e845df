/**
 * The embedded store's backups (issue 71): FerretDB keeps each database in one SQLite file, and its own binary
 * (tools/ferretdb/snapshot.go) copies that file as one consistent whole while FerretDB goes on writing, compressed,
 * at the lowest CPU priority. Read through the driver instead, FerretDB turns every stored row into BSON, about 85
 * µs of its CPU a document, on the cores ingestion needs (docs/performance.md, bench:backup).
 *
 * A restore unpacks the copy, checks its counts against the manifest, and reads it through a FerretDB of its own,
 * so it is written into any store (the embedded one or MongoDB) as a backup read through the driver would be.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import { startFerret } from '../embedded/ferretdb.ts';
import { freePort } from '../embedded/process.ts';
import { BackupFileError } from './backup-file.ts';

/** Documents in each collection of a copy. */
export type Counts = Record<string, number>;

/**
 * How the copy is run on the CPU ingestion leaves: under SCHED_IDLE (`chrt`), which any other process preempts at
 * once (at nice 19 ingestion's p99 still doubled in some runs while it ran: docs/decisions.md, "Backups"), or at
 * nice 19 where chrt is missing. `bin/lookout.mjs` puts the CLI's own backup under the same policy.
 */
const LOW_PRIORITY = ((): string[] => {
  const found = (name: string) => ['/usr/bin', '/bin'].map((dir) => path.join(dir, name)).find((p) => fs.existsSync(p));
  const [chrt, nice] = [found('chrt'), found('nice')];
  return chrt ? [chrt, '--idle', '0'] : nice ? [nice, '-n', '19'] : [];
})();

function run(binary: string, args: string[], lowPriority: boolean): Promise<Counts> {
  const [command, ...argv] = lowPriority ? [...LOW_PRIORITY, binary, ...args] : [binary, ...args];
  return new Promise((resolve, reject) => {
    const child = spawn(command!, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new BackupFileError(stderr.trim().replace(/^ferretdb: /, '') || `${path.basename(binary)} exited with ${code}`));
      resolve((JSON.parse(stdout) as { collections: Counts }).collections);
    });
  });
}

/** Copies the SQLite file `sqliteFile` to `to` (compressed); returns what the copy holds. */
export const takeSnapshot = (binary: string, sqliteFile: string, to: string) => run(binary, ['-snapshot', sqliteFile, '-to', to], true);

/** Unpacks a copy into the SQLite file `to`; returns what it holds. A damaged copy is refused. */
export const unpackSnapshot = (binary: string, from: string, to: string) => run(binary, ['-unpack', from, '-to', to], false);

/** A FerretDB of its own serving an unpacked copy (`<dir>/sqlite/<db>.sqlite`) until `close`. */
export async function openSnapshot(opts: { cacheDir: string; dir: string; db: string }): Promise<{ db: Db; close: () => Promise<void> }> {
  const ferret = await startFerret({ dir: opts.dir, port: await freePort(), cacheDir: opts.cacheDir, pidFile: false });
  const client = new MongoClient(ferret.url, { serverSelectionTimeoutMS: 30_000 });
  try {
    await client.connect();
  } catch (err) {
    await ferret.stop();
    throw err;
  }
  return {
    db: client.db(opts.db),
    async close() {
      await client.close();
      await ferret.stop();
    },
  };
}

/**
 * A backup's copy (its `s` records) gathered into a file under TMPDIR, then unpacked where a FerretDB serves it:
 * `<dir>/sqlite/<db>.sqlite` (startFerret's layout).
 */
export function packedCopy() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-copy-'));
  const packed = path.join(dir, 'copy.zst');
  const out = fs.createWriteStream(packed);
  return {
    dir,
    async write(chunk: Buffer): Promise<void> {
      if (!out.write(chunk)) await once(out, 'drain');
    },
    /** the copy unpacked as database `db`: what it holds */
    async unpack(binary: string, db: string): Promise<Counts> {
      out.end();
      await once(out, 'close');
      await fs.promises.mkdir(path.join(dir, 'sqlite'));
      const counts = await unpackSnapshot(binary, packed, path.join(dir, 'sqlite', `${db}.sqlite`));
      await fs.promises.rm(packed);
      return counts;
    },
    async remove(): Promise<void> {
      out.destroy();
      await fs.promises.rm(dir, { recursive: true, force: true });
    },
  };
}

export type PackedCopy = ReturnType<typeof packedCopy>;
