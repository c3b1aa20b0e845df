/**
 * A fresh instance's first sign-in burst (issue 66), against the real API, workers, Redis and FerretDB: a project
 * created, bound and attacked at once, on fresh Redis state (a prefix of its own) and a freshly started worker, has
 * its security issues raised, run after run.
 */
import { expect, it } from 'vitest';
import { startWorkers } from '../workers/main.ts';
import { boundProject, eventId, startTestContext } from './helpers/context.ts';
import { until } from './helpers/until.ts';

const RUNS = 20;

it(`raises a fresh instance's first burst (two actors at once) in ${RUNS} runs of ${RUNS}`, async () => {
  const missed: string[] = [];
  for (let run = 0; run < RUNS; run++) {
    const ctx = await startTestContext();
    const workers = await startWorkers(ctx.runtime, { queues: ['events'] });
    try {
      const p = await boundProject(ctx);
      const attempt = (actor: string, ip: string) => ({ event_id: eventId(), timestamp: new Date().toISOString(), security: { kind: 'login_failed', actor, ip, outcome: 'wrong password' } });
      const answers = await Promise.all([
        ...Array.from({ length: 8 }, () => p.send(attempt('ana', '203.0.113.21'))),
        ...Array.from({ length: 8 }, () => p.send(attempt('bo', '203.0.113.22'))),
      ]);
      expect(answers.map((a) => a.status)).toEqual(Array(16).fill(202));
      const raised = async () => ((await p.get('/issues?kind=security')).body.issues as { title: string }[]).map((i) => i.title);
      try {
        await until(async () => (await raised()).length >= 2, 20_000, 100);
      } catch {
        missed.push(`run ${run + 1}: ${JSON.stringify(await raised())}`);
      }
    } finally {
      await workers.close();
      await ctx.close();
    }
  }
  expect(missed).toEqual([]);
}, 20 * 40_000);
