/**
 * The monitors' clock (issue 68): each minute, every monitor environment due by it is judged by the state machine
 * (`applyTick`: a run missed, a run timed out), once, by whichever worker takes that minute's lease. Minutes no
 * worker saw (all were down) are judged one by one when one comes back. A minute waits until every check-in received
 * before it was applied (ingestion behind is not a miss), and a miss in a span when no API process was up to hear
 * check-ins is recorded as unknown and fails nothing.
 */
import crypto from 'node:crypto';
import pLimit from 'p-limit';
import { MONITOR_DEFAULTS } from '../src/domain/checkins.ts';
import { applyTick, expectNothing, type MonitorEnvState } from '../src/domain/monitor-state.ts';
import { nextRun } from '../src/domain/schedule.ts';
import type { Logger } from '../src/log.ts';
import type { InstallationsService } from '../src/services/installations.service.ts';
import type { MonitorsService } from '../src/services/monitors.service.ts';
import type { MonitorsState } from '../src/state/monitors.state.ts';
import type { CheckInsStore } from '../src/store/checkins.store.ts';
import { makeTicker } from '../src/util/ticker.ts';

const MINUTE = 60_000;
/** Most monitor environments judged per project and minute (Sentry's 10,000); the rest the next minute. */
const MAX_PER_MINUTE = 10_000;
/** How often a turn looks for what dead workers left undelivered. */
const LEFT_OVER_EVERY_MS = 10_000;
/** Monitor environments judged at once: their saves overlap on Redis and the database. */
const AT_ONCE = 32;
/** How long a minute's lease holds a worker that died judging it. */
const LEASE_MS = 60_000;
/** A backlog marker this much older than a minute names a group not yet applied (younger ones are written ahead). */
const BACKLOG_SLACK_MS = 2000;

export interface MonitorClockDeps {
  state: MonitorsState;
  store: CheckInsStore;
  log: Logger;
  /** delivers what a minute's judgement changed (records, an incident opened or grown), and what dead workers left */
  monitors: Pick<MonitorsService, 'deliver' | 'deliverLeftOver'>;
  /** bound installations gone silent or heard again, judged with the same minute */
  installations?: Pick<InstallationsService, 'watch'>;
}

export function makeMonitorClock(deps: MonitorClockDeps) {
  const { state, store, log } = deps;
  let leftOverAt = -Infinity;

  /** Judges one minute, unless another worker holds it; whether it was judged. */
  async function judge(minute: number): Promise<boolean> {
    const lease = await state.leaseMinute(minute, LEASE_MS);
    if (!lease) return false;
    try {
      const heard = await state.heardMinutes(minute - 24 * 60 * MINUTE, minute);
      const seen = (from: number, to: number) => {
        if (from < minute - 24 * 60 * MINUTE) return true; // older than what is recorded: taken as heard
        for (let m = from - (from % MINUTE); m < to; m += MINUTE) if (!heard.has(m)) return false;
        return true;
      };
      for (const project of await state.projects()) {
        const due = await state.due(project, minute, MAX_PER_MINUTE);
        if (due.length === 0) continue;
        // the project's monitors read once; their environments judged side by side (each one's save is its own)
        const monitors = new Map((await store.monitorsOf(project)).map((m) => [m.slug, m]));
        const limit = pLimit(AT_ONCE);
        await Promise.all(
          due.map((m) =>
            limit(async () => {
              const monitor = monitors.get(m.slug);
              const config = monitor?.config ?? MONITOR_DEFAULTS;
              const ref = { project, ...m };
              // a paused monitor expects nothing: what it was waiting for is let go, and it leaves the due list
              const tick = monitor?.paused ? expectNothing : (s: MonitorEnvState) => applyTick(s, config, minute, nextRun, seen, () => crypto.randomUUID().replace(/-/g, ''));
              const saved = await state.update(ref, { minute }, tick);
              if (saved) await deps.monitors.deliver(ref, saved.outbox, new Date(), monitor);
            }),
          ),
        );
      }
      await deps.installations?.watch(minute, seen);
      await state.judged(minute);
      return true;
    } finally {
      await lease.end();
    }
  }

  return {
    /**
     * Judges the minutes from the last one judged up to `now`'s, in order; stops at a minute whose check-ins are not
     * all applied yet, or that another worker is judging. The first turn ever starts at `now`'s minute.
     */
    async turn(now: number): Promise<number> {
      const current = now - (now % MINUTE);
      if (now - leftOverAt >= LEFT_OVER_EVERY_MS) {
        leftOverAt = now;
        await deps.monitors.deliverLeftOver(new Date(now));
      }
      let judged = 0;
      for (let minute = (await state.lastJudged(current)) + MINUTE; minute <= current; minute += MINUTE) {
        if ((await store.backlog.olderThan(new Date(minute - BACKLOG_SLACK_MS), 1)).length > 0) break;
        if (!(await judge(minute))) break;
        judged += 1;
      }
      return judged;
    },

    /** Turns every `everyMs` (a second: a minute is judged as soon as it begins) until stopped; one turn at a time. */
    start(everyMs = 1000): { stop(): Promise<void> } {
      const ticker = makeTicker(
        async () => void (await this.turn(Date.now())),
        (err) => log.warn({ err: err.message }, 'the monitors clock could not turn; it tries again'),
        everyMs,
      );
      ticker.start();
      return ticker;
    },
  };
}
export type MonitorClock = ReturnType<typeof makeMonitorClock>;
