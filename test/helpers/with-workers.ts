/**
 * A test file's stack: a test context (test/helpers/context.ts) and workers
 * serving `queues`, started before the file's tests and closed after them.
 */
import { afterAll, beforeAll } from 'vitest';
import type { QueueKey } from '../../config/index.ts';
import { startWorkers } from '../../workers/main.ts';
import { startTestContext, type TestContext } from './context.ts';

/** `use` gets the context once it is up; `env` are settings for it (startTestContext). */
export function withWorkers(queues: readonly QueueKey[], use: (ctx: TestContext) => void, env: Record<string, string> = {}): void {
  let ctx: TestContext | undefined;
  let workers: Awaited<ReturnType<typeof startWorkers>> | undefined;
  beforeAll(async () => {
    ctx = await startTestContext(env);
    workers = await startWorkers(ctx.runtime, { queues });
    use(ctx);
  });
  afterAll(async () => {
    await workers?.close();
    await ctx?.close();
  });
}
