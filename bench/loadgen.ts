/**
 * The storm's load generator, tools/loadgen (Go): built once into the cache folder (rebuilt when its sources
 * change), given its plan as JSON and read back request by request. It sends what bench:storm's Node generator sent,
 * at a fraction of the CPU: on two shared cores, every point the load generator takes is one the stack has not.
 */
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { builtOnce } from '../src/embedded/go-build.ts';
import { loadConfig } from '../config/index.ts';
import { rootPath } from '../src/util/paths.ts';

const SOURCE_DIR = rootPath('tools', 'loadgen');
const SOURCES = ['main.go', 'go.mod'];

/** One sender of the plan: its header lines (bench/raw-http.ts' `headLines`) and 50 kinds of event, each with the event_id 32 zeros. */
export interface LoadSender {
  native_head: string;
  envelope_path: string;
  envelope_head: string;
  templates: string[];
}

export interface LoadPlan {
  url: string;
  max_sockets: number;
  timeout_ms: number;
  /** event_ids are this plus the request's number (1, 2, …): unique across the runs of one benchmark */
  seq_start: number;
  senders: LoadSender[];
  /** rates a second, by sender */
  phases: { seconds: number; rates: number[] }[];
}

/** One request's fate, as the generator saw it (ms from its start). */
export interface LoadRecord {
  due: number;
  phase: number;
  /** the sender's index in the plan */
  from: number;
  /** 0: no answer */
  status: number;
  ms: number;
  /** NaN: it never had a connection */
  connectMs: number;
  fresh: boolean;
  /** a refusal's reason (`?` when its body named none), or why there was no answer */
  reason: string;
}

/** The generator's path, built when missing or stale. */
export function loadgenBinary(): string {
  return builtOnce(
    loadConfig({}).cacheDir,
    'loadgen',
    SOURCES.map((file) => path.join(SOURCE_DIR, file)),
    ({ go, env, out }) => {
      const built = spawnSync(go, ['build', '-trimpath', '-o', out, '.'], { cwd: SOURCE_DIR, env, encoding: 'utf8' });
      if (built.status !== 0) throw new Error(`building tools/loadgen failed:\n${built.stderr}`);
    },
    { what: "bench:storm's load generator (tools/loadgen)" },
  );
}

/**
 * Runs `plan`; `onPhase(n, pid)` as phase n starts (n = the number of phases once sending is over), with the
 * generator's pid to count its CPU. Resolves once every request is answered or has given up.
 */
export async function runLoad(plan: LoadPlan, onPhase: (n: number, pid: number) => void): Promise<{ records: LoadRecord[]; lateP99Ms: number[] }> {
  const child = spawn(loadgenBinary(), [], { stdio: ['pipe', 'pipe', 'pipe'] });
  const pid = child.pid!;
  child.stdin.end(JSON.stringify(plan));
  let errors = '';
  readline.createInterface({ input: child.stderr }).on('line', (line) => {
    const m = /^phase (\d+)$/.exec(line);
    if (m) onPhase(Number(m[1]), pid);
    else errors += `${line}\n`;
  });
  const records: LoadRecord[] = [];
  let lateP99Ms: number[] = [];
  const lines = readline.createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    const f = line.split('\t');
    if (f[0] === 'late') lateP99Ms = f.slice(1).map(Number);
    else records.push({ due: Number(f[0]), phase: Number(f[1]), from: Number(f[2]), status: Number(f[3]), ms: Number(f[4]), connectMs: Number(f[5]), fresh: f[6] === '1', reason: f[7] ?? '' });
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`tools/loadgen exited with ${code}: ${errors}`);
  return { records, lateP99Ms };
}
