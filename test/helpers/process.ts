/** Runs Lookout's own entry points as child processes, as an operator would. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/lookout.mjs', import.meta.url));
/** What `npm start` runs: the dashboard and the server built when stale, then the compiled server. */
export const NPM_START = fileURLToPath(new URL('../../scripts/bootstrap.mjs', import.meta.url));

export function runCli(args: string[], env: Record<string, string>, input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCommand(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, input });
}

/** Runs a command to its end, collecting its output; asynchronous, so an API in the test process keeps answering. */
export function runCommand(
  command: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env });
    child.stdin.end(opts.input ?? '');
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })); // 'close': after the output is all read
  });
}

/** Starts a long-running entry point (`script`: bin/lookout.mjs unless told) and resolves once `ready` matches its stderr. */
export function startProcess(args: string[], env: Record<string, string>, ready: RegExp, timeoutMs = 60_000, script = BIN) {
  const child = spawn(process.execPath, [script, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } });
  let output = '';
  const matched = new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready after ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = output.match(ready);
      if (m) {
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stderr.on('data', onData);
    child.stdout.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ready:\n${output}`));
    });
  });
  // A caller that never waits for readiness (and stops the process early) must not leave an unhandled rejection;
  // callers that await `matched` still get it.
  matched.catch(() => {});
  return { child, matched, output: () => output, stop: (signal: NodeJS.Signals = 'SIGTERM') => stopChild(child, signal) };
}

export function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill(signal);
  });
}

/**
 * Two API and two worker processes on the same stores, as docs/scaling.md runs them: the APIs' URLs (clients
 * alternate between them, as a load balancer would), every process, and `stop` for all of them.
 */
export async function startFleet(env: Record<string, string>, workerArgs: string[] = []) {
  const procs: ReturnType<typeof startProcess>[] = [];
  const apis: string[] = [];
  for (let i = 0; i < 2; i++) {
    const api = startProcess(['api'], { ...env, PORT: '0' }, /API listening on (http:\/\/\S+)/);
    const worker = startProcess(['worker', ...workerArgs], env, /workers started/);
    procs.push(api, worker);
    apis.push((await api.matched)[1]!);
    await worker.matched;
  }
  /** A POST to API `n % 2`, as a load balancer would spread them; a refused connection is status 0. */
  const post = async (n: number, path: string, key: string, body: unknown) => {
    try {
      const res = await fetch(`${apis[n % apis.length]}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-key': key }, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    } catch (err) {
      return { status: 0, body: { message: (err as Error).message } as Record<string, unknown> };
    }
  };
  return { procs, apis, post, stop: () => Promise.all(procs.map((p) => p.stop())) };
}
export type Fleet = Awaited<ReturnType<typeof startFleet>>;
