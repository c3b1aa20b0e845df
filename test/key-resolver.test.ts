/**
 * The key cache on the real store: a busy key costs one store read at a
 * time, before and after its entry ages, and an admin change (forget) is
 * never undone by a read that started before it.
 */
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { makeKeyResolver } from '../src/http/key-resolver.ts';
import type { ProjectsStore } from '../src/store/projects.store.ts';
import { makeProject, startTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => ctx?.close());
afterEach(() => vi.useRealTimers());

/** The real projects store, counting its key reads; `hold` keeps the next reads waiting until released. */
function countingStore(store: ProjectsStore) {
  const counted = { reads: 0, gate: null as Promise<void> | null };
  const projects: ProjectsStore = {
    ...store,
    async bySecretHash(hash) {
      counted.reads += 1;
      const found = await store.bySecretHash(hash);
      await counted.gate;
      return found;
    },
  };
  return { projects, counted };
}

async function boundProject() {
  const p = await makeProject(ctx);
  const project = (await ctx.runtime.stores.projects.get(Number(p.project.id)))!;
  await ctx.runtime.sdk.activate(project, { instance_id: `resolver-test-${p.project.id}` }, new Date());
  return p;
}

it('many requests with a key nobody has looked up yet cost one store read', async () => {
  const p = await boundProject();
  const { projects, counted } = countingStore(ctx.runtime.stores.projects);
  const resolver = makeKeyResolver(projects, 5);
  const answers = await Promise.all(Array.from({ length: 200 }, () => resolver.resolve(p.secret)));
  expect(counted.reads).toBe(1);
  expect(new Set(answers.map((a) => `${a?.kind}:${a?.project._id}`))).toEqual(new Set([`secret:${p.project.id}`]));
});

it('past half its life an entry is served at once and read again once, in the background', async () => {
  const p = await boundProject();
  const { projects, counted } = countingStore(ctx.runtime.stores.projects);
  const resolver = makeKeyResolver(projects, 10);
  vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-23T10:00:00Z') });
  await resolver.resolve(p.secret);
  expect(counted.reads).toBe(1);

  vi.setSystemTime(new Date('2026-11-23T10:00:06Z')); // 6 of its 10 s
  let release!: () => void;
  counted.gate = new Promise((r) => (release = r));
  const answers = await Promise.all(Array.from({ length: 50 }, () => resolver.resolve(p.secret)));
  expect(answers.every((a) => a?.kind === 'secret')).toBe(true); // answered while the read waits
  expect(counted.reads).toBe(2);
  counted.gate = null;
  release();
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r)); // the background read settles

  vi.setSystemTime(new Date('2026-11-23T10:00:10.500Z')); // past the first entry's life, early in the renewed one
  await resolver.resolve(p.secret);
  expect(counted.reads).toBe(2);
});

it('a read that started before an admin change neither fills the cache after it nor answers a later request', async () => {
  const p = await boundProject();
  const { projects, counted } = countingStore(ctx.runtime.stores.projects);
  const resolver = makeKeyResolver(projects, 60);
  let release!: () => void;
  counted.gate = new Promise((r) => (release = r));
  const before = resolver.resolve(p.secret);
  await vi.waitFor(() => expect(counted.reads).toBe(1));
  resolver.forget(); // an admin change arrives while the read is under way
  const after = resolver.resolve(p.secret);
  expect(counted.reads).toBe(2); // a read of its own, not the one started before the change
  release();
  await Promise.all([before, after]);

  resolver.forget();
  counted.gate = new Promise((r) => (release = r));
  const stale = resolver.resolve(p.secret);
  await vi.waitFor(() => expect(counted.reads).toBe(3));
  resolver.forget();
  release();
  await stale;
  counted.gate = null;
  await resolver.resolve(p.secret);
  expect(counted.reads).toBe(4); // the read from before the change left nothing cached
});
