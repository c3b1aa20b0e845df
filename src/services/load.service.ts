/**
 * What admission decides from (src/domain/admission.ts), kept fresh without costing a request anything: the group
 * commits' queues are read live (in memory); the event loop's delay is its mean over the last quarter second
 * (beyond the 10 ms the sampling timer waits); the job queues' depth, Redis' memory and the data folder's free disk are sampled every second or few.
 * A signal that cannot be read is not known (null or 0), and does not refuse anything.
 */
import fs from 'node:fs/promises';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { admission, type AdmissionLimits, type AdmissionSignals, type Verdict } from '../domain/admission.ts';
import { redisMemory } from '../redis/memory.ts';
import type { RedisClient } from '../redis/connect.ts';

export interface LoadSources {
  /** each group commit's waiting items (src/util/group-commit.ts) */
  waiting: (() => { items: number; oldestMs: number })[];
  /** jobs waiting for a worker in the ingest queues */
  queueDepth: () => Promise<number>;
  redis: RedisClient;
  /** the folder whose disk must keep its floor free */
  dataDir: string;
}

const LOOP_MS = 250;
const QUEUE_MS = 1000;
const MEMORY_MS = 2000;
const DISK_MS = 5000;

export function makeLoadSampler(sources: LoadSources, limits: AdmissionLimits) {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const sampled = { loopDelayMs: 0, queueDepth: 0, redisMemory: null as number | null, diskFreeBytes: null as number | null };

  const every = (ms: number, sample: () => Promise<void> | void) => {
    const run = () => void Promise.resolve().then(sample).catch(() => {});
    run();
    const timer = setInterval(run, ms);
    timer.unref();
    return timer;
  };
  const timers = [
    every(LOOP_MS, () => {
      // the mean: a saturated loop delays every timer, one garbage collection only one of them
      sampled.loopDelayMs = loop.count > 0 ? loop.mean / 1e6 - 10 : 0;
      loop.reset();
    }),
    every(QUEUE_MS, async () => {
      sampled.queueDepth = await sources.queueDepth();
    }),
    every(MEMORY_MS, async () => {
      const m = await redisMemory(sources.redis);
      sampled.redisMemory = m.full ? 1 : m.max === 0 ? null : m.used / m.max;
    }),
    every(DISK_MS, async () => {
      const s = await fs.statfs(sources.dataDir).catch(() => null);
      sampled.diskFreeBytes = s ? s.bavail * s.bsize : null;
    }),
  ];

  function signals(): AdmissionSignals {
    let waiting = 0;
    let oldestWaitMs = 0;
    for (const w of sources.waiting) {
      const now = w();
      waiting += now.items;
      oldestWaitMs = Math.max(oldestWaitMs, now.oldestMs);
    }
    return { waiting, oldestWaitMs, ...sampled };
  }

  return {
    signals,
    /** Whether one more ingest request is taken now. */
    verdict: (): Verdict => admission(signals(), limits),
    close(): void {
      timers.forEach(clearInterval);
      loop.disable();
    },
  };
}
export type LoadSampler = ReturnType<typeof makeLoadSampler>;
