/**
 * Before the first release, raw session batches were once stored unpacked (queried through the `project_received`
 * index) and issues once had numeric ids (moved through `issues_migration`). No code reads either any more: a
 * store made then keeps an index every insert pays for, and maybe an empty collection. Both go.
 */
import type { Db } from 'mongodb';

export async function up(db: Db): Promise<void> {
  const raw = db.collection('session_raw');
  const indexes = await raw.listIndexes().toArray().catch(() => [] as { name?: string }[]);
  if (indexes.some((index) => index.name === 'project_received')) await raw.dropIndex('project_received');
  const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
  if (names.includes('issues_migration')) await db.collection('issues_migration').drop();
}
