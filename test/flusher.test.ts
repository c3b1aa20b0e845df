/**
 * The flusher against real Redis and FerretDB: a project with more changed issues than one snapshot reads is copied
 * to MongoDB a chunk at a time (no one script call holds Redis for all of them), every issue, and nothing is
 * left marked dirty.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { AppliedGroup } from '../src/state/apply-events.ts';
import { makeFlusher } from '../src/state/flusher.ts';
import type { IssuesState } from '../src/state/issues.state.ts';
import { eventId, makeProject, startTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => ctx?.close());

it('copies 1,600 changed issues of one project in chunks, every one of them, and clears them', async () => {
  const { runtime } = ctx;
  const project = Number((await makeProject(ctx)).project.id);
  await runtime.keeper.verify(project, new Date());
  const ISSUES = 1600;
  for (let g = 0; g < ISSUES / 400; g++) {
    const fingerprints = Array.from({ length: 400 }, (_, i) => `fp-${g}-${i}`);
    const ids = await runtime.issuesState.issueIds(project, fingerprints);
    const group: AppliedGroup = {
      id: `flush-${g}`,
      receivedAt: new Date(),
      attempts: [],
      errors: fingerprints.map((fingerprint, i) => ({
        event: `${project}:${eventId()}`,
        issue: ids.get(fingerprint)!,
        issue_kind: 'error' as const,
        at: new Date(Date.now() - 60_000 + i),
        release: null,
        environment: null,
        company: null,
        level: 'error',
        title: `Error${g}x${i}: boom`,
        culprit: 'app',
        exception_type: `Error${g}x${i}`,
        fingerprint,
      })),
    };
    expect((await runtime.issuesState.apply(project, [group])).code).not.toBe('unverified');
    await runtime.issuesState.pending.noteApplied([project], group.id);
  }

  // the snapshots the flusher takes, counted by what each read
  const chunks: number[] = [];
  const issuesState: IssuesState = {
    ...runtime.issuesState,
    async snapshot(p, from) {
      const snap = await runtime.issuesState.snapshot(p, from);
      chunks.push(snap.issues.length);
      return snap;
    },
  };
  const flusher = makeFlusher({
    state: runtime.sessionState,
    issuesState,
    keeper: runtime.keeper,
    store: runtime.stores.sessions,
    issuesStore: runtime.stores.issues,
    eventsStore: runtime.stores.events,
    log: pino({ level: 'silent' }),
    metrics: runtime.metrics,
    intervalMs: 60_000,
  });
  await flusher.tick();

  expect(chunks.length).toBeGreaterThan(1);
  expect(Math.max(...chunks)).toBeLessThan(ISSUES);
  expect(chunks.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(ISSUES); // HSCAN may return one twice, never none
  expect(await runtime.mongo.db.collection('issues').countDocuments({ project_id: project })).toBe(ISSUES);
  expect(await runtime.issuesState.redis.hlen(runtime.issuesState.keys(project).edirty)).toBe(0);
});
