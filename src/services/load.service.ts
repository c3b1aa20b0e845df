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
/** the most requests a project may send at once while a limit is in force, however small its share (an SDK sends a few together) */
const BURST = 5;
/** how long a sender that stopped keeps its share */
const SENDER_MEMORY_MS = 1000;
/** the most senders told apart in a moment; the rest are OTHERS (a flood of made-up keys is one sender) */
const MAX_SENDERS = 100;
const OTHERS = 'others';
/** a storm's onset is looked for over windows this long, whatever moment they fall in */
const ONSET_MS = 15;
const QUEUE_MS = 1000;
const MEMORY_MS = 2000;
const DISK_MS = 5000;

/** A sender's share while a limit is in force: tokens refilled at `rate` a second, at most BURST or a tenth of a second's. */
interface Bucket {
  rate: number;
  tokens: number;
  refilled: number;
  lastAsked: number;
}
const refilled = (b: Bucket, now: number) => Math.min(Math.max(BURST, b.rate / 10), b.tokens + ((now - b.refilled) / 1000) * b.rate);

export function makeLoadSampler(sources: LoadSources, limits: AdmissionLimits, onMoment?: (m: { busy: number; rate: number | null }) => void) {
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
  // How many ingest requests a second this process takes while its thread is busy (null: all that come), set each
  // moment from the thread's busy share (src/domain/admission.ts' `nextAdmitRate`): one collection or one long task
  // is not a busy thread (the busy share is smoothed over two moments), a saturated moment is. It is shared fairly
  // among the senders (a project, or a key this process has not resolved yet; past MAX_SENDERS in a moment the rest
  // are one), a bucket of tokens each, refilled at its share. A storm's onset does not wait for the moment's end:
  // with no limit in force, a thread past `maxBusy` that sees three times as many requests a second as usual ends the
  // moment there, as a saturated one. The first limit never takes fewer than usual: a stall that only looked like a
  // storm refuses nothing. (ADMIT_MAX_BUSY_PERCENT=100: none of this is kept)
  const limiting = limits.maxBusy < 1;
  // costMs: what one request it takes costs the thread, learned from moments that refused nothing (a fresh process
  // assumes a millisecond); usualPerS: the requests a second it sees while no limit is in force, moving slowly (one
  // moment's burst or lull is not what is usual)
  const taking = { rate: null as number | null, taken: 0, busy: 0, costMs: 1, saturatedFor: 0, usualPerS: 0 };
  let asked = new Map<string | number, number>();
  let buckets = new Map<string | number, Bucket>();
  let busySince = performance.eventLoopUtilization();
  const started = performance.now();
  let momentStart = started;
  // the last look for a storm's onset: when, how many requests had been seen in all, and the thread's busy time
  let looked = { at: started, seen: 0, elu: busySince };
  let seenInAll = 0;

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
    const seen = [...asked.values()].reduce((sum, n) => sum + n, 0);
    if (seen === taking.taken && taking.taken >= 10 && !atOnset) taking.costMs = 0.8 * taking.costMs + (0.2 * raw * ms) / taking.taken;
    const seenPerS = (seen * 1000) / ms;
    // what is usual is what a thread with room sees (a storm's first moment is not)
    if (taking.rate === null && raw <= limits.maxBusy) taking.usualPerS = 0.9 * taking.usualPerS + 0.1 * seenPerS;
    // a process compiling its code in its first seconds is busy, not overloaded: it takes what comes meanwhile
    const warm = now - started >= limits.busyAfterMs;
    const perS = new Map([...asked].map(([sender, n]) => [sender, (n * 1000) / ms]));
    const floor = calmFloor(perS, ((limits.maxBusy / 2) * 1000) / taking.costMs);
    const moment = { busy: taking.busy, takenPerS: (taking.taken * 1000) / ms, usualPerS: taking.usualPerS, costMs: taking.costMs, saturatedFor: taking.saturatedFor, floor };
    taking.rate = warm ? nextAdmitRate(taking.rate, moment, limits.maxBusy) : null;
    onMoment?.({ busy: raw, rate: taking.rate });
    taking.taken = 0;
    const was = buckets;
    buckets = new Map();
    if (taking.rate !== null) {
      const shares = fairShares(taking.rate, perS);
      // a sender that sent within the last second keeps its bucket (a calm SDK sends every so often)
      for (const [sender, bucket] of was) if (!shares.has(sender) && now - bucket.lastAsked < SENDER_MEMORY_MS) shares.set(sender, bucket.rate);
      for (const [sender, share] of shares) {
        const old = was.get(sender);
        // a limit coming into force gives no sender more than a few at once: a moment's worth is what a storm's
        // first moments take too much of
        buckets.set(sender, { rate: share, tokens: old ? refilled(old, now) : Math.min(BURST, share / 20), refilled: now, lastAsked: old?.lastAsked ?? now });
      }
    }
    asked = new Map();
  }

  /** A storm's onset: no limit in force, three times the usual requests a second, and a thread past `maxBusy`. */
  function onset(now: number): boolean {
    if (taking.rate !== null || now - looked.at < ONSET_MS) return false;
    const elu = performance.eventLoopUtilization();
    const [perS, busy] = [((seenInAll - looked.seen) * 1000) / (now - looked.at), performance.eventLoopUtilization(elu, looked.elu).utilization];
    looked = { at: now, seen: seenInAll, elu };
    return perS >= 3 * taking.usualPerS + BUSY_FLOOR_PER_S && busy > limits.maxBusy;
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
    /** Whether one more ingest request, from `sender` (its project's id, or its key when not resolved yet), is taken now. */
    verdict(sender: string | number = ''): Verdict {
      const verdict = admission(signals(), limits);
      if (!verdict.admit || !limiting) return verdict;
      // at most MAX_SENDERS are told apart in a moment; the rest share one bucket
      if (!asked.has(sender) && asked.size >= MAX_SENDERS) sender = OTHERS;
      asked.set(sender, (asked.get(sender) ?? 0) + 1);
      seenInAll += 1;
      const now = performance.now();
      if (onset(now)) endMoment(true);
      if (taking.rate !== null) {
        // a sender new to this moment starts with an equal share until the next one; a project may send a few at
        // once, a key this process has not resolved one (it may be made up)
        let bucket = buckets.get(sender);
        if (!bucket) buckets.set(sender, (bucket = { rate: taking.rate / (buckets.size + 1), tokens: typeof sender === 'number' ? BURST : 1, refilled: now, lastAsked: now }));
        bucket.tokens = refilled(bucket, now);
        bucket.refilled = bucket.lastAsked = now;
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
