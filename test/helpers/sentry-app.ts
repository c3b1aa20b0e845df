/** Runs a fixture app (test/fixtures/) instrumented with the real @sentry/node SDK, its DSN pointed at the test API. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TestContext } from './context.ts';

/** Its output once it exits 0 (it prints `{"flushed":true}` when the SDK sent everything); `preload` a fixture loaded first with --import. */
export function runSentryApp(ctx: TestContext, fixture: string, project: { publicKey: string; id: string | number }, opts: { preload?: string } = {}): Promise<string> {
  const dsn = `http://${project.publicKey}@${new URL(ctx.api).host}/${project.id}`;
  const app = fileURLToPath(new URL(`../fixtures/${fixture}`, import.meta.url));
  return new Promise<string>((resolve, reject) => {
    const preload = opts.preload ? ['--import', fileURLToPath(new URL(`../fixtures/${opts.preload}`, import.meta.url))] : [];
    const child = spawn(process.execPath, [...preload, app], { env: { ...process.env, LOOKOUT_DSN: dsn }, stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`${fixture} exited ${code}: ${text}`))));
  });
}
