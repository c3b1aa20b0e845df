/**
 * The issues collection on the real store: ids stored as 16-digit strings
 * (so FerretDB finds them by its `_id` index), read back as numbers, and
 * issues written before that change migrated at start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssueDoc } from '../src/store/issues.store.ts';
import { startTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await startTestContext();
});
afterAll(async () => {
  await ctx?.close();
});

function issue(id: number, project: number, lastSeen: string): IssueDoc {
  const at = new Date(lastSeen);
  return {
    _id: id,
    project_id: project,
    kind: 'error',
    fingerprint: `fp-${id}`,
    title: `Error ${id}`,
    exception_type: 'Error',
    level: 'error',
    status: 'unresolved',
    first_seen: at,
    last_seen: at,
    event_count: 1,
    last_release: null,
    regression_count: 0,
    resolved_count: 0,
    resolved_at: null,
    resolved_release: null,
    last_regressed_at: null,
    last_regression_kind: null,
    companies: [],
    created_at: at,
    latest_event: null,
  };
}

describe('issues store', () => {
  it('stores ids as strings, orders them numerically and reads them back as numbers', async () => {
    const store = ctx.runtime.stores.issues;
    await store.write([issue(9, 501, '2026-01-01T00:00:09Z'), issue(10, 501, '2026-01-01T00:00:10Z'), issue(11, 502, '2026-01-01T00:00:11Z')], 1);
    const raw = await ctx.runtime.mongo.db.collection('issues').findOne({ project_id: 501, fingerprint: 'fp-9' });
    expect(raw?._id).toBe('0000000000000009');
    expect(await store.getMany(501, [10])).toMatchObject([{ _id: 10, title: 'Error 10' }]);
    expect(await store.getMany(502, [10])).toEqual([]); // another project's issue is not found
    expect(await store.maxId()).toBeGreaterThanOrEqual(11);
  });
});
