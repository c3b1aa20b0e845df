import fs from 'node:fs';
import os from 'node:os';
import type { Logger } from '../log.ts';

/**
 * Lowers this process' CPU priority to `nice` (WORKER_NICE). On a machine the worker shares with the API, the kernel
 * then gives a core to the API first when both want one: a request waits less, and the worker, whose work can wait a
 * few milliseconds, takes what is left (docs/decisions.md). On a machine of its own it changes nothing. Linux keeps
 * a nice value per thread, so every thread running now is lowered; threads started later inherit it. A priority
 * already lower is kept. Failing to change it is logged, never fatal.
 */
export function lowerPriority(nice: number, log: Logger): void {
  if (nice === 0) return;
  let threads = [0];
  try {
    threads = fs.readdirSync('/proc/self/task').map(Number);
  } catch {
    // no /proc: the calling thread only
  }
  for (const thread of threads) {
    try {
      os.setPriority(thread, Math.max(os.getPriority(thread), nice));
    } catch (err) {
      if ((err as { info?: { code?: string } }).info?.code === 'ESRCH') continue; // the thread ended meanwhile
      log.warn({ err: (err as Error).message, nice }, 'could not lower the worker CPU priority (WORKER_NICE)');
      return;
    }
  }
}
