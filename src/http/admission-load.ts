/**
 * Admission's state (src/domain/admission.ts), kept without costing a request anything: the ingest requests taken
 * and not yet answered, per sender (a project, or a key this process has not resolved yet) and in all, counted live;
 * how many are answered a second; the delay of the queue (the longest any taken item has waited for its turn of the
 * thread, src/util/turns.ts, or for the store's next write, src/util/group-commit.ts) read every DELAY_MS into
 * CoDel's state; the job queues' depth, Redis' memory and the data folder's free disk sampled every second or few.
 * A signal that cannot be read is not known (null or 0), and refuses nothing.
 */
import fs from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { admission, CALM, nextShedding, type AdmissionLimits, type AdmissionSignals, type Shedding, type Verdict } from '../domain/admission.ts';
import { redisMemory } from '../redis/memory.ts';
import type { RedisClient } from '../redis/connect.ts';

export interface LoadSources {
  /** each queue an item taken waits in before it is written: the thread's turns, the group commits */
  waiting: (() => { items: number; oldestMs: number })[];
  /** the group commits alone (a store that stalls) */
  writes: (() => { items: number; oldestMs: number })[];
  /** jobs waiting for a worker in the ingest queues */
  queueDepth: () => Promise<number>;
  redis: RedisClient;
  /** the folder whose disk must keep its floor free */
  dataDir: string;
}

/** how often the queue's delay is read into CoDel's state */
const DELAY_MS = 50;
/** the most senders told apart; the rest are OTHERS (a flood of made-up keys is one sender) */
const MAX_SENDERS = 1000;
const OTHERS = 'others';
const QUEUE_MS = 1000;
const MEMORY_MS = 2000;
const DISK_MS = 5000;

export interface LoadMoment {
  delayMs: number;
  shedding: boolean;
  inFlight: number;
  answeredPerS: number;
}

export function makeLoadSampler(sources: LoadSources, limits: AdmissionLimits, onMoment?: (m: LoadMoment) => void) {
  const sampled = { queueDepth: 0, redisMemory: null as number | null, diskFreeBytes: null as number | null };
  const inFlight = new Map<string | number, number>();
  // requests each sender sent in this moment, and a second's worth lately (the most told apart: MAX_SENDERS)
  let sentNow = new Map<string | number, number>();
  let sendsPerS = new Map<string | number, number>();
  let largestPerS = 0;
  let total = 0;
  let answered = 0;
  let answeredPerS = 0;
  let state: Shedding = CALM;
  let lastMoment = performance.now();

  const every = (ms: number, sample: () => Promise<void> | void) => {
    const run = () => void Promise.resolve().then(sample).catch(() => {});
    run();
    const timer = setInterval(run, ms);
    timer.unref();
    return timer;
  };
  const oldest = (of: LoadSources['waiting']) => of.reduce((ms, w) => Math.max(ms, w().oldestMs), 0);

  const timers = [
    every(DELAY_MS, () => {
      const now = performance.now();
      // what was answered a second, over about the last quarter second
      answeredPerS = 0.8 * answeredPerS + (0.2 * answered * 1000) / Math.max(1, now - lastMoment);
      answered = 0;
      const seconds = Math.max(1, now - lastMoment) / 1000;
      let arrived = 0;
      for (const n of sentNow.values()) arrived += n;
      const rates = new Map<string | number, number>();
      for (const sender of new Set([...sendsPerS.keys(), ...sentNow.keys()])) {
        const rate = 0.8 * (sendsPerS.get(sender) ?? 0) + (0.2 * (sentNow.get(sender) ?? 0)) / seconds;
        if (rate >= 0.5) rates.set(sender, rate);
      }
      [sendsPerS, sentNow, largestPerS] = [rates, new Map(), Math.max(0, ...rates.values())];
      lastMoment = now;
      const delayMs = oldest(sources.waiting);
      state = nextShedding(state, { delayMs, arrived, inFlight: total }, now, limits);
      onMoment?.({ delayMs, shedding: state.shedding, inFlight: total, answeredPerS });
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
    return { inFlight: total, answeredPerS, oldestWriteWaitMs: oldest(sources.writes), ...sampled };
  }

  return {
    signals,
    /**
     * Whether one more ingest request from `sender` is taken now; a request taken is in flight until `answered`
     * is called for it.
     */
    verdict(sender: string | number): Verdict {
      const counted = sentNow.has(sender) || sentNow.size < MAX_SENDERS ? sender : OTHERS;
      sentNow.set(counted, (sentNow.get(counted) ?? 0) + 1);
      const load = { inFlight: inFlight.get(sender) ?? 0, senders: Math.max(1, inFlight.size), sendsPerS: sendsPerS.get(counted) ?? 0, largestPerS };
      const verdict = admission(signals(), load, state.shedding, limits);
      if (verdict.admit) {
        inFlight.set(sender, (inFlight.get(sender) ?? 0) + 1);
        total += 1;
      }
      return verdict;
    },
    /** A request taken from `sender` is answered (or its client went away). */
    answered(sender: string | number): void {
      const n = (inFlight.get(sender) ?? 1) - 1;
      if (n > 0) inFlight.set(sender, n);
      else inFlight.delete(sender);
      total -= 1;
      answered += 1;
    },
    close(): void {
      timers.forEach(clearInterval);
    },
  };
}
export type LoadSampler = ReturnType<typeof makeLoadSampler>;
