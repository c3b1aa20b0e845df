/**
 * What admission decides from (src/domain/admission.ts), kept fresh without costing a request anything: the group
 * commits' queues are read live (in memory); the event loop's delay is its mean over the last quarter second
 * (beyond the 10 ms the sampling timer waits), and its busy share sets how many ingest requests a second are taken
 * (src/domain/admission.ts' `nextAdmitRate`); the job queues' depth, Redis' memory and the data folder's free disk are sampled every second or few.
 * A signal that cannot be read is not known (null or 0), and does not refuse anything.
 */
import fs from 'node:fs/promises';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { admission, fairShares, nextAdmitRate, type AdmissionLimits, type AdmissionSignals, type Verdict } from '../domain/admission.ts';
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
/** how often the thread's busy share is read and the rate it takes set (a storm is 600 requests a tenth of a second) */
const BUSY_MS = 100;
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
  // How many ingest requests a second this process takes while its thread is busy (null: all that come), shared
  // fairly among the keys that send (a bucket of tokens each, refilled at its share); its busy share is smoothed
  // over about two tenths of a second (one collection or one long task is not a busy thread; a storm is).
  // (ADMIT_MAX_BUSY_PERCENT=100: none of this is kept)
  const limiting = limits.maxBusy < 1;
  const taking = { rate: null as number | null, taken: 0, busy: 0 };
  let asked = new Map<string, number>();
  let buckets = new Map<string, { rate: number; tokens: number; refilled: number }>();
  let busySince = performance.eventLoopUtilization();
  const started = performance.now();
  const timers = [
    every(LOOP_MS, () => {
      // the mean: a saturated loop delays every timer, one garbage collection only one of them
      sampled.loopDelayMs = loop.count > 0 ? loop.mean / 1e6 - 10 : 0;
      loop.reset();
    }),
    ...(limiting
      ? [
          every(BUSY_MS, () => {
            const elu = performance.eventLoopUtilization();
            taking.busy = (taking.busy + performance.eventLoopUtilization(elu, busySince).utilization) / 2;
            busySince = elu;
            const now = performance.now();
            // a process compiling its code in its first seconds is busy, not overloaded: it takes what comes meanwhile
            const warm = now - started >= limits.busyAfterMs;
            taking.rate = warm ? nextAdmitRate(taking.rate, { busy: taking.busy, takenPerS: (taking.taken * 1000) / BUSY_MS }, limits.maxBusy) : null;
            taking.taken = 0;
            const was = buckets;
            buckets = new Map();
            if (taking.rate !== null) {
              const perS = new Map([...asked].map(([key, n]) => [key, (n * 1000) / BUSY_MS]));
              for (const [key, share] of fairShares(taking.rate, perS)) buckets.set(key, { rate: share, tokens: was.get(key)?.tokens ?? share / 10, refilled: now });
            }
            asked = new Map();
          }),
        ]
      : []),
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
    /** Whether one more ingest request, sent with `key`, is taken now. */
    verdict(key = ''): Verdict {
      const verdict = admission(signals(), limits);
      if (!verdict.admit || !limiting) return verdict;
      asked.set(key, (asked.get(key) ?? 0) + 1);
      if (taking.rate !== null) {
        const now = performance.now();
        // a key that did not send in the last moment starts with an equal share until the next one
        let bucket = buckets.get(key);
        if (!bucket) buckets.set(key, (bucket = { rate: taking.rate / (buckets.size + 1), tokens: 1, refilled: now }));
        bucket.tokens = Math.min(Math.max(1, bucket.rate / 10), bucket.tokens + ((now - bucket.refilled) / 1000) * bucket.rate);
        bucket.refilled = now;
        if (bucket.tokens < 1) return { admit: false, status: 429, reason: 'busy', retryAfter: 1 };
        bucket.tokens -= 1;
      }
      taking.taken += 1;
      return verdict;
    },
    close(): void {
      timers.forEach(clearInterval);
      loop.disable();
    },
  };
}
export type LoadSampler = ReturnType<typeof makeLoadSampler>;
