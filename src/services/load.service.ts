/**
 * What admission decides from (src/domain/admission.ts), kept fresh without costing a request anything: the group
 * commits' queues are read live (in memory); the event loop's delay is its mean over the last quarter second
 * (beyond the 10 ms the sampling timer waits), and its busy share sets how many ingest requests a second are taken
 * (src/domain/admission.ts' `nextAdmitRate`); the job queues' depth, Redis' memory and the data folder's free disk are sampled every second or few.
 * A signal that cannot be read is not known (null or 0), and does not refuse anything.
 */
import fs from 'node:fs/promises';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { admission, BUSY_FLOOR_PER_S, calmFloor, fairShares, nextAdmitRate, SATURATED, type AdmissionLimits, type AdmissionSignals, type Verdict } from '../domain/admission.ts';
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
const BUSY_MS = 50;
/** a storm's onset is looked for from this far into a moment, at most this often */
const ONSET_MS = 15;
const ONSET_LOOK_MS = 5;
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
  // fairly among the senders (a project, or a key not known yet; a bucket of tokens each, refilled at its share), set each moment from the
  // thread's busy share (src/domain/admission.ts' `nextAdmitRate`); one collection or one long task is not a busy
  // thread (the busy share is smoothed over two moments), a saturated moment is. A storm's onset does not wait for
  // the moment's end: with no limit in force, a thread past `maxBusy` while it sees twice as many requests a second
  // as usual ends the moment there, as a saturated one. (ADMIT_MAX_BUSY_PERCENT=100: none of this is kept)
  const limiting = limits.maxBusy < 1;
  // costMs: what one request it takes costs the thread, learned from moments that refused nothing (a fresh process
  // assumes a millisecond); usualPerS: the requests a second it sees while no limit is in force, slow to rise (a
  // storm that began late in a moment must not raise the bar its onset is measured against)
  const taking = { rate: null as number | null, taken: 0, busy: 0, costMs: 1, saturatedFor: 0, usualPerS: 0, seen: 0 };
  let asked = new Map<string | number, number>();
  let buckets = new Map<string | number, { rate: number; tokens: number; refilled: number }>();
  let busySince = performance.eventLoopUtilization();
  const started = performance.now();
  let momentStart = started;
  let lookedAt = started;

  /** Ends a moment: the busy share, the cost learned, the rate for the next and each sender's share of it. */
  function endMoment(atOnset = false): void {
    const elu = performance.eventLoopUtilization();
    // a storm's onset is taken as a saturated moment: it will be one a moment later
    const raw = atOnset ? 1 : performance.eventLoopUtilization(elu, busySince).utilization;
    busySince = elu;
    const now = performance.now();
    const ms = Math.max(1, now - momentStart);
    momentStart = now;
    taking.busy = raw > SATURATED ? raw : (taking.busy + raw) / 2;
    taking.saturatedFor = raw > SATURATED ? taking.saturatedFor + 1 : 0;
    if (taking.seen === taking.taken && taking.taken >= 10 && !atOnset) taking.costMs = 0.8 * taking.costMs + (0.2 * raw * ms) / taking.taken;
    const seenPerS = (taking.seen * 1000) / ms;
    if (taking.rate === null && !atOnset) taking.usualPerS = seenPerS < taking.usualPerS ? seenPerS : 0.9 * taking.usualPerS + 0.1 * seenPerS;
    // a process compiling its code in its first seconds is busy, not overloaded: it takes what comes meanwhile
    const warm = now - started >= limits.busyAfterMs;
    const perS = new Map([...asked].map(([sender, n]) => [sender, (n * 1000) / ms]));
    const floor = calmFloor(perS, ((limits.maxBusy / 2) * 1000) / taking.costMs);
    const moment = { busy: taking.busy, takenPerS: (taking.taken * 1000) / ms, costMs: taking.costMs, saturatedFor: taking.saturatedFor, floor };
    taking.rate = warm ? nextAdmitRate(taking.rate, moment, limits.maxBusy) : null;
    if (process.env.ADMIT_TRACE) process.stderr.write(`admit ${Math.round(now - started)} ms ${Math.round(ms)} busy ${raw.toFixed(2)}/${taking.busy.toFixed(2)} cost ${taking.costMs.toFixed(2)} taken ${taking.taken} asked ${[...asked.values()].join('/')} floor ${Math.round(floor)} rate ${taking.rate === null ? '-' : Math.round(taking.rate)}\n`);
    taking.taken = 0;
    taking.seen = 0;
    const was = buckets;
    buckets = new Map();
    if (taking.rate !== null) {
      for (const [sender, share] of fairShares(taking.rate, perS)) buckets.set(sender, { rate: share, tokens: was.get(sender)?.tokens ?? share / 20, refilled: now });
    }
    asked = new Map();
  }

  /** A storm's onset: no limit in force, twice the usual requests a second, and a thread past `maxBusy`. */
  function onset(now: number): boolean {
    if (taking.rate !== null || now - momentStart < ONSET_MS || now - lookedAt < ONSET_LOOK_MS) return false;
    lookedAt = now;
    if ((taking.seen * 1000) / (now - momentStart) < 2 * taking.usualPerS + BUSY_FLOOR_PER_S) return false;
    return performance.eventLoopUtilization(performance.eventLoopUtilization(), busySince).utilization > limits.maxBusy;
  }

  const timers = [
    every(LOOP_MS, () => {
      // the mean: a saturated loop delays every timer, one garbage collection only one of them
      sampled.loopDelayMs = loop.count > 0 ? loop.mean / 1e6 - 10 : 0;
      loop.reset();
    }),
    ...(limiting ? [every(BUSY_MS, endMoment)] : []),
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
    /** Whether one more ingest request, from `sender` (its project, or its key), is taken now. */
    verdict(sender: string | number = ''): Verdict {
      const verdict = admission(signals(), limits);
      if (!verdict.admit || !limiting) return verdict;
      asked.set(sender, (asked.get(sender) ?? 0) + 1);
      taking.seen += 1;
      const now = performance.now();
      if (onset(now)) endMoment(true);
      if (taking.rate !== null) {
        // a sender that did not send in the last moment starts with an equal share until the next one
        let bucket = buckets.get(sender);
        if (!bucket) buckets.set(sender, (bucket = { rate: taking.rate / (buckets.size + 1), tokens: 1, refilled: now }));
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
