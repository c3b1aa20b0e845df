/**
 * Stored formats change by numbered migrations, as graphile-worker's do: each is a file `NNN-what.ts` with an `up`,
 * listed below in order, run once at start after the indexes and recorded in `migrations` (its name, when it ran).
 * A migration must be safe to run twice (two processes starting together may both run it before either records
 * it), so it checks before it changes. Never edit one that has shipped; add the next.
 */
import type { Db } from 'mongodb';
import type { Logger } from '../../log.ts';
import { insertOnce } from '../mongo.ts';
import * as dropPreReleaseLeftovers from './001-drop-pre-release-leftovers.ts';
import * as slugs from './002-slugs.ts';

interface Migration {
  name: string;
  up(db: Db): Promise<void>;
}

export const MIGRATIONS: readonly Migration[] = [
  { name: '001-drop-pre-release-leftovers', ...dropPreReleaseLeftovers },
  { name: '002-slugs', ...slugs },
];

interface MigrationDoc {
  _id: string;
  ran_at: Date;
}

/** Runs the migrations this store has not recorded, in order; returns the names it ran. */
export async function runMigrations(db: Db, log: Logger, migrations: readonly Migration[] = MIGRATIONS): Promise<string[]> {
  const done = db.collection<MigrationDoc>('migrations');
  const recorded = new Set((await done.find({}).toArray()).map((m) => m._id));
  const ran: string[] = [];
  for (const migration of migrations) {
    if (recorded.has(migration.name)) continue;
    const started = Date.now();
    await migration.up(db);
    await insertOnce(done, { _id: migration.name, ran_at: new Date() });
    log.info({ migration: migration.name, ms: Date.now() - started }, 'ran a store migration');
    ran.push(migration.name);
  }
  return ran;
}
