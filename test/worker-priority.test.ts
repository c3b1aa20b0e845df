/**
 * `lookout worker` lowers its own CPU priority to WORKER_NICE, every thread
 * of it, so that on a shared machine the API gets a core first (docs/decisions.md).
 */
import fs from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestContext, type TestContext } from './helpers/context.ts';
import { startProcess } from './helpers/process.ts';

let ctx: TestContext;
const procs: ReturnType<typeof startProcess>[] = [];
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await ctx?.close();
});

/** The nice value of each thread of a process (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNices(pid: number): number[] {
  return fs.readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

// A worker never raises its priority: one started already lower (the test run under `nice`) keeps its own.
it.each([
  ['by default, at nice 10', {}, 10],
  ['with WORKER_NICE=3, at nice 3', { WORKER_NICE: '3' }, 3],
  ['with WORKER_NICE=0, as started', { WORKER_NICE: '0' }, 0],
])('a worker process runs %s on every thread', async (_name, env, nice) => {
  const worker = startProcess(['worker', '--queues', 'maintenance'], { ...ctx.env, LOG_LEVEL: 'info', ...env }, /workers started/);
  procs.push(worker);
  await worker.matched;
  const nices = threadNices(worker.child.pid!);
  expect(nices.length).toBeGreaterThan(1);
  expect(new Set(nices)).toEqual(new Set([Math.max(nice, os.getPriority())]));
});
