/**
 * What the traces pipeline keeps in Redis (issue 69), under each project's prefix: the transaction names it has
 * admitted (`tnames`, capped: later names are counted under one overflow group), the slowest durations of each
 * group in the hour (`tslow:<hour>`) and the bytes of samples kept today (`tbytes:<day>`). All three are decided
 * in one script call per project and job (sample-traces-3.lua). Losing them costs nothing counted: names are
 * admitted again, and an hour's slowest are chosen again from what comes next.
 */
import type { RedisClient } from '../redis/connect.ts';
import { defineScripts, projectKeys } from './scripts.ts';

/** A transaction the sampler weighs: its group, duration and packed size, and whether it must be kept (failed, drawn). */
export interface SampleCandidate {
  group: string;
  duration: number;
  bytes: number;
  must: boolean;
}

export type SampleDecision = 'counted' | 'sample' | 'over_budget';
const DECISIONS: Record<number, SampleDecision> = { 0: 'counted', 1: 'sample', 2: 'over_budget' };

export interface SampleLimits {
  slowestPerHour: number;
  bytesPerDay: number;
  maxNames: number;
}

export function makeTracesState(redis: RedisClient, prefix: string) {
  const scripts = defineScripts(redis);
  return {
    /** Which of `names` are admitted, and each candidate's decision, in order. */
    async decide(project: number, now: Date, names: string[], candidates: SampleCandidate[], limits: SampleLimits): Promise<{ admitted: Set<string>; decisions: SampleDecision[] }> {
      const { base } = projectKeys(prefix, project);
      const hour = Math.floor(now.getTime() / 3_600_000);
      const day = Math.floor(hour / 24);
      const [admitted, decisions] = await scripts.sampleTraces(
        `${base}tslow:${hour}`,
        `${base}tbytes:${day}`,
        `${base}tnames`,
        limits.slowestPerHour,
        limits.bytesPerDay,
        limits.maxNames,
        names.length,
        ...names,
        ...candidates.flatMap((c) => [c.group, Math.round(c.duration), c.bytes, c.must ? 1 : 0]),
      );
      return {
        admitted: new Set(names.filter((_, i) => admitted[i] === 1)),
        decisions: decisions.map((d) => {
          const decision = DECISIONS[d];
          if (!decision) throw new Error(`sample-traces answered ${d}, which it never should`);
          return decision;
        }),
      };
    },
  };
}
export type TracesState = ReturnType<typeof makeTracesState>;
