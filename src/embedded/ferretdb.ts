/**
 * The embedded MongoDB-compatible store: FerretDB v1.24.2 on its SQLite
 * backend. The binary is a small Go wrapper (tools/ferretdb) around FerretDB's
 * embeddable package, built once into the cache folder (against FerretDB's
 * source with the fixes of tools/ferretdb/patches.json) and rebuilt only when
 * the wrapper's sources or the patches change.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { builtOnce } from './go-build.ts';
import { isOwnStore, StartError } from './instance.ts';
import { spawnManaged, type ManagedProcess } from './process.ts';
import { rootPath } from '../util/paths.ts';

const SOURCE_DIR = rootPath('tools', 'ferretdb');
const SOURCES = ['main.go', 'snapshot.go', 'go.mod', 'go.sum', 'patches.json'];

interface Patches {
  module: string;
  patches: { file: string; from: string; to: string }[];
}

/**
 * A copy of the FerretDB module with tools/ferretdb/patches.json applied
 * (each replacement must match exactly once), and a go.mod that builds the
 * wrapper against it.
 */
function patchedModule(go: string, env: NodeJS.ProcessEnv, workDir: string): string {
  const { module, patches } = JSON.parse(fs.readFileSync(path.join(SOURCE_DIR, 'patches.json'), 'utf8')) as Patches;
  const goMod = fs.readFileSync(path.join(SOURCE_DIR, 'go.mod'), 'utf8');
  const version = new RegExp(`^require ${module.replaceAll('.', '\\.')} (\\S+)$`, 'm').exec(goMod)?.[1];
  if (!version) throw new StartError(`tools/ferretdb/go.mod does not require ${module}`);
  const download = spawnSync(go, ['mod', 'download', '-json', `${module}@${version}`], { cwd: SOURCE_DIR, encoding: 'utf8', env });
  if (download.status !== 0) throw new StartError(`downloading ${module}@${version} failed:\n${download.stdout}${download.stderr}`);
  const source = path.join(workDir, 'src');
  fs.rmSync(workDir, { recursive: true, force: true });
  fs.cpSync((JSON.parse(download.stdout) as { Dir: string }).Dir, source, { recursive: true });
  for (const patch of patches) {
    const file = path.join(source, patch.file);
    const text = fs.readFileSync(file, 'utf8');
    if (text.split(patch.from).length !== 2) throw new StartError(`tools/ferretdb/patches.json: the patch of ${patch.file} does not match ${module}@${version} exactly once`);
    fs.chmodSync(file, 0o644); // the module cache is read-only
    fs.writeFileSync(file, text.replace(patch.from, () => patch.to));
  }
  const modFile = path.join(workDir, 'go.mod');
  fs.writeFileSync(modFile, `${goMod}\nreplace ${module} => ${source}\n`);
  fs.copyFileSync(path.join(SOURCE_DIR, 'go.sum'), path.join(workDir, 'go.sum'));
  return modFile;
}

/** Returns the path of the FerretDB binary, building it when missing or stale. */
export function ensureFerretBinary(cacheDir: string, log: (line: string) => void = () => {}): string {
  return builtOnce(
    cacheDir,
    'ferretdb-embedded',
    SOURCES.map((file) => path.join(SOURCE_DIR, file)),
    ({ go, env, out, stamp }) => {
      log('building the embedded FerretDB once (a few minutes on a fresh machine)…');
      const workDir = path.resolve(cacheDir, `ferretdb-build-${stamp}`);
      const modFile = patchedModule(go, env, workDir);
      const build = (extra: string[]) =>
        spawnSync(go, ['build', '-trimpath', `-modfile=${modFile}`, ...extra, '-o', out, '.'], {
          cwd: SOURCE_DIR,
          encoding: 'utf8',
          env,
          maxBuffer: 64 * 1024 * 1024,
        });
      let result = build([]);
      // Newer Go linkers refuse some //go:linkname references in dependencies.
      if (result.status !== 0 && /linkname/.test(result.stderr)) result = build(['-ldflags=-checklinkname=0']);
      fs.rmSync(workDir, { recursive: true, force: true });
      if (result.status !== 0) {
        throw new StartError(`building FerretDB failed (or set MONGODB_URL to a MongoDB 6+ server):\n${result.stderr}`);
      }
    },
    { what: 'the embedded FerretDB (tools/ferretdb)', otherwise: ' or set MONGODB_URL to a MongoDB 6+ server' },
  );
}

export const ferretPidFile = (dir: string) => path.resolve(dir, 'ferretdb.pid');

/** Whether `pid` is a FerretDB of this folder: it names its SQLite folder on its command line. */
export function isOwnFerret(pid: number, dir: string, binary: string): boolean {
  return isOwnStore(pid, binary, path.resolve(dir, 'sqlite'));
}

const SQLITE_PAGE_BYTES = 8192;

export async function startFerret(opts: {
  dir: string;
  port: number;
  cacheDir: string;
  pidFile?: boolean;
  log?: (line: string) => void;
  /** where FerretDB serves Go's profiler (/debug/pprof/); off when unset */
  debugAddr?: string;
}): Promise<ManagedProcess> {
  const binary = ensureFerretBinary(opts.cacheDir, opts.log);
  const dir = path.resolve(opts.dir);
  const sqliteDir = path.join(dir, 'sqlite');
  fs.mkdirSync(sqliteDir, { recursive: true });
  const pidFile = opts.pidFile === false ? undefined : ferretPidFile(dir);
  // 8 KB pages: an error event's row (~2.6 KB, its payload deflated) then shares its page with two others, where a
  // 4 KB page holds one; larger pages made every random insert rewrite more (docs/decisions.md). SQLite takes the
  // size when it creates a database file; older files keep theirs.
  const sqliteUrl = `file:${sqliteDir}/?_pragma=page_size(${SQLITE_PAGE_BYTES})`;
  return spawnManaged({
    name: 'ferretdb',
    command: binary,
    args: ['-listen-addr', `127.0.0.1:${opts.port}`, '-handler', 'sqlite', '-sqlite-url', sqliteUrl, ...(opts.debugAddr ? ['-debug-addr', opts.debugAddr] : [])],
    port: opts.port,
    url: `mongodb://127.0.0.1:${opts.port}/`,
    pidFile,
    logFile: path.join(dir, 'ferretdb.log'),
    timeoutMs: 60_000,
  });
}

/**
 * The SQLite file holding database `db` when `mongoUrl` is served by a FerretDB of Lookout's on this machine (found
 * by the command line it was started with), or null: another server, or one this process cannot see. A backup
 * copies that file directly (src/backup/snapshot.ts).
 */
export function localSqliteFile(mongoUrl: string, db: string): string | null {
  let port: string;
  try {
    const url = new URL(mongoUrl);
    if (!['127.0.0.1', 'localhost'].includes(url.hostname)) return null;
    port = url.port || '27017';
  } catch {
    return null;
  }
  let pids: string[];
  try {
    pids = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return null; // not Linux
  }
  for (const pid of pids) {
    let argv: string[];
    try {
      argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (!path.basename(argv[0] ?? '').startsWith('ferretdb-embedded-')) continue;
    const arg = (flag: string) => argv[argv.indexOf(flag) + 1] ?? '';
    if (arg('-listen-addr') !== `127.0.0.1:${port}`) continue;
    const dir = /^file:(.*?)\/?(\?.*)?$/.exec(arg('-sqlite-url'))?.[1];
    const file = dir ? path.join(dir, `${db}.sqlite`) : null;
    return file && fs.existsSync(file) ? file : null;
  }
  return null;
}
