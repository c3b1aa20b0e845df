/**
 * Stored formats change by numbered migrations, as graphile-worker's do: each is a file `NNN-what.ts` with an `up`,
 * listed below in order, run once at start after the indexes and recorded in `migrations` (its name, when it ran).
 * A migration must be safe to run twice (two processes starting together may both run it before either records
 * it), so it checks before it changes. Never edit one that has shipped; add the next.
 */
import type { Db } from 'mongodb';
import type { Logger } from '../../log.ts';
import { StartError } from '../../embedded/instance.ts';
import { insertOnce } from '../mongo.ts';
import { PACKAGE_VERSION } from '../../util/paths.ts';
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

/** The recorded migrations this Lookout does not know, sorted: a newer release ran them. */
export function unknownMigrations(recorded: string[], migrations: readonly Migration[] = MIGRATIONS): string[] {
  return recorded.filter((name) => !migrations.some((m) => m.name === name)).sort();
}

/** A store a newer Lookout wrote: it holds formats this one does not know, and this one must not write to it. */
export class StoreTooNewError extends StartError {}

/**
 * Runs the migrations this store has not recorded, in order; returns the names it ran. A store that recorded a
 * migration this Lookout does not know was upgraded by a newer release: refused, nothing written.
 */
export async function runMigrations(db: Db, log: Logger, migrations: readonly Migration[] = MIGRATIONS): Promise<string[]> {
  const done = db.collection<MigrationDoc>('migrations');
  const recorded = new Set((await done.find({}).toArray()).map((m) => m._id));
  const unknown = unknownMigrations([...recorded], migrations);
  if (unknown.length > 0) {
    throw new StoreTooNewError(
      `this store was upgraded by a newer Lookout (its migration ${unknown.join(', ')} is unknown to this one, ${PACKAGE_VERSION}): run that release or a later one; an older release cannot read it`,
    );
  }
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
