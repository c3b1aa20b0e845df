/**
 * `lookout admin backup` and `restore` (issue 71): every collection of Lookout's database, read and written through
 * the driver (the embedded FerretDB and MongoDB alike), and the one state that lives only in Redis and is not
 * rebuilt from the database: each project's decisions.
 *
 * On the embedded store, the backup is instead a copy of its SQLite file, taken in one transaction
 * (src/backup/snapshot.ts): consistent by itself, and a restore reads it through a FerretDB of its own.
 *
 * A backup read through the driver runs while ingestion goes on. What makes it consistent (docs/decisions.md,
 * "Backups"):
 * - nothing moves while it reads: the maintenance jobs that delete or move documents (retention, repacking) hold
 *   off while a backup holds its mark in Redis, and those running when it starts are waited for;
 * - collections are read in the order their writers make them whole: the backlogs first (a group's marker is
 *   written before the group), then issues (flushed before the markers of their events go), then every other
 *   collection, the id counters last (an id in the file is never ahead of its counter);
 * - what is derived is not trusted but recounted on restore: each project's hot state and rollups are rebuilt
 *   from the raw batches and stored events (`lookout admin recount`), and a group of events whose issue the backup
 *   does not hold is put back on the backlog, so its job applies it as it would have.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from 'mongodb';
import type { Logger } from '../log.ts';
import type { Runtime } from '../runtime.ts';
import { PACKAGE_VERSION } from '../util/paths.ts';
import type { RedisClient } from '../redis/connect.ts';
import { decisionKeys } from '../state/decisions.state.ts';
import { projectKeys } from '../state/scripts.ts';
import { runMigrations, unknownMigrations } from '../store/migrations/index.ts';
import { bodyOf, checkSum, openBackupWriter, readRecords, BACKUP_FORMAT, BackupFileError, READABLE_FORMATS, type Manifest } from './backup-file.ts';
import { ensureFerretBinary, localSqliteFile } from '../embedded/ferretdb.ts';
import { openSnapshot, packedCopy, takeSnapshot, type Counts, type PackedCopy } from './snapshot.ts';

/** What a backup `--without-events` keeps: the configuration an installation and its people need, no telemetry. */
export const CONFIG_COLLECTIONS = [
  'orgs',
  'projects',
  'slugs',
  'bindings',
  'users',
  'api_tokens',
  'bouncers',
  'channels',
  'contacts',
  'monitors',
  'probes',
  'maintenance',
  'settings',
  'counters',
  'migrations',
] as const;

/** Read first (in this order) and last: see the module's comment. */
const FIRST = ['session_backlog', 'event_backlog', 'checkin_backlog', 'trace_backlog', 'issues'];
const LAST = ['counters'];
/** Collections whose documents a restore puts in place of those a fresh instance made at its start (its keys). */
const REPLACED = new Set(['settings', 'migrations']);
/** A store holding any of these is not empty: a restore would mix two histories. */
const OCCUPIED_BY = ['orgs', 'projects', 'events', 'session_raw'];
/** The backup's mark in Redis, renewed while it runs: the maintenance jobs that move documents hold off. */
const HOLD_MS = 60_000;

export interface BackupDeps {
  db: Db;
  redis: RedisClient;
  prefix: string;
  version: string;
  log: Logger;
  /** resolves once no maintenance job that moves documents is running */
  maintenanceIdle: () => Promise<void>;
  /** the embedded store's SQLite file of this database, when this machine serves it: copied rather than read */
  sqliteFile: string | null;
  /** where the embedded FerretDB's binary is built (it makes and unpacks the copies) */
  cacheDir: string;
}

/** What a backup reads through: the store, Redis, and the maintenance queue it waits on. */
export function backupDepsOf(rt: Runtime): BackupDeps {
  const maintenance = rt.queues.queue('maintenance');
  return {
    db: rt.mongo.db,
    redis: rt.redis,
    prefix: rt.config.queuePrefix,
    version: PACKAGE_VERSION,
    log: rt.log,
    sqliteFile: rt.mongo.profile.singleWriter ? localSqliteFile(rt.urls.mongoUrl, rt.config.mongoDb) : null,
    cacheDir: rt.config.cacheDir,
    // the jobs that move documents and were running when the backup began: up to a minute for them to end
    async maintenanceIdle() {
      const deadline = Date.now() + 60_000;
      const moving = async () => (await maintenance.getJobs(['active'])).some((j) => j.name === 'maintenance.retention' || j.name === 'maintenance.repack');
      while ((await moving()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    },
  };
}

export const holdKey = (prefix: string) => `${prefix.replace(/[{}]/g, '')}:backup-hold`;

/** Whether a backup is running: the maintenance jobs that delete or move documents skip their turn meanwhile. */
export async function backupRunning(redis: RedisClient, prefix: string): Promise<boolean> {
  return (await redis.exists(holdKey(prefix))) === 1;
}

/** Orders the database's collections for reading (module comment). */
export function readingOrder(names: string[]): string[] {
  const rest = names.filter((n) => !FIRST.includes(n) && !LAST.includes(n)).sort();
  return [...FIRST.filter((n) => names.includes(n)), ...rest, ...LAST.filter((n) => names.includes(n))];
}

/** The manifest, the file's size, and how long the backup waited for maintenance jobs that move documents. */
export async function backup(deps: BackupDeps, file: string, opts: { withoutEvents: boolean }): Promise<Manifest & { bytes: number; waited_ms: number }> {
  const started = new Date();
  const key = holdKey(deps.prefix);
  await deps.redis.set(key, started.toISOString(), 'PX', HOLD_MS);
  const renew = setInterval(() => void deps.redis.pexpire(key, HOLD_MS).catch(() => {}), HOLD_MS / 4);
  const copied = opts.withoutEvents ? null : deps.sqliteFile;
  const writer = await openBackupWriter(file, { compressed: copied !== null });
  try {
    await deps.maintenanceIdle();
    const waitedMs = Date.now() - started.getTime();
    let collections: Counts = {};
    let snapshot: Pick<Manifest, 'snapshot' | 'migrations'> = {};
    if (copied) {
      // the store's migrations as the copy has them: a restore refuses a newer Lookout's before it writes anything
      const migrations = (await deps.db.collection<{ _id: string }>('migrations').find({}, { projection: { _id: 1 } }).toArray()).map((m) => m._id);
      const copy = `${file}.copy`;
      try {
        collections = await takeSnapshot(ensureFerretBinary(deps.cacheDir), copied, copy);
        await writer.snapshot(copy);
      } finally {
        await fs.promises.rm(copy, { force: true });
      }
      snapshot = { snapshot: { store: 'ferretdb-sqlite', db: path.basename(copied, '.sqlite') }, migrations };
    } else {
      const names = (await deps.db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name).filter((n) => !n.startsWith('system.'));
      const chosen = opts.withoutEvents ? names.filter((n) => (CONFIG_COLLECTIONS as readonly string[]).includes(n)) : names;
      for (const name of readingOrder(chosen)) {
        await writer.collection(name);
        let count = 0;
        for await (const raw of deps.db.collection(name).find({}, { raw: true, batchSize: 2000 })) {
          await writer.document(raw as unknown as Buffer);
          count += 1;
        }
        collections[name] = count;
      }
    }
    let redisKeys = 0;
    if (!opts.withoutEvents) {
      for await (const found of decisionKeys(deps.redis, deps.prefix)) {
        const [value, ttl] = await Promise.all([deps.redis.dumpBuffer(found.key), deps.redis.pttl(found.key)]);
        if (value === null) continue; // gone since the scan
        await writer.redisKey({ key: `${found.project}:${found.name}`, ttl_ms: ttl > 0 ? ttl : 0, value });
        redisKeys += 1;
      }
    }
    const manifest: Manifest = {
      format: BACKUP_FORMAT,
      lookout_version: deps.version,
      started_at: started.toISOString(),
      finished_at: new Date().toISOString(),
      without_events: opts.withoutEvents,
      collections,
      redis_keys: redisKeys,
      needs: 'the ENCRYPTION_KEY the instance ran with, if it set one (sealed secrets stay sealed; without ENCRYPTION_KEY the sealing key is in the settings collection, in this file)',
      ...snapshot,
    };
    const { bytes } = await writer.finish(manifest);
    deps.log.info({ file, bytes, collections: Object.keys(collections).length, waited_ms: waitedMs }, 'backup written');
    return { ...manifest, bytes, waited_ms: waitedMs };
  } catch (err) {
    await writer.abandon();
    throw err;
  } finally {
    clearInterval(renew);
    await deps.redis.del(key).catch(() => {});
  }
}

/** Reads the whole file: its checksum, every record, and the counts against the manifest. Writes nothing. */
export async function verifyBackup(file: string, cacheDir: string): Promise<Manifest> {
  const { manifest, copy } = await verified(file, cacheDir);
  await copy?.remove();
  return manifest;
}

type Verified = { manifest: Manifest; bounds: { start: number; end: number }; copy: { dir: string; db: string; remove: () => Promise<void> } | null };

/**
 * verifyBackup, with where the file's records are (a restore reads them again without checking the sum twice) and
 * the embedded store's copy unpacked, when the file holds one (the caller removes it).
 */
async function verified(file: string, cacheDir: string): Promise<Verified> {
  const bounds = await checkSum(file);
  const counted: Record<string, number> = {};
  let current: string | null = null;
  let keys = 0;
  let manifest: Manifest | null = null;
  const migrations: string[] = [];
  let copy: PackedCopy | null = null;
  try {
    for await (const { kind, body } of readRecords(file, bounds)) {
      if (manifest) throw new BackupFileError(`${file} is damaged: records follow its manifest`);
      if (kind === 'c') counted[(current = bodyOf<{ name: string }>(body).name)] = 0;
      else if (kind === 'd') {
        if (current === null) throw new BackupFileError(`${file} is damaged: a document outside any collection`);
        counted[current]! += 1;
        if (current === 'migrations') migrations.push(bodyOf<{ _id: string }>(body)._id);
      } else if (kind === 'k') keys += 1;
      else if (kind === 's') await (copy ??= packedCopy()).write(body);
      else manifest = bodyOf<Manifest>(body);
    }
    if (!manifest) throw new BackupFileError(`${file} is incomplete: it has no manifest`);
    if (!READABLE_FORMATS.includes(manifest.format)) throw new BackupFileError(`${file} is a backup of format ${manifest.format}; this Lookout reads formats ${READABLE_FORMATS.join(' and ')}`);
    const { snapshot } = manifest;
    if (!snapshot !== !copy) throw new BackupFileError(`${file} is damaged: its manifest and its records disagree on the store's copy`);
    if (snapshot && copy) {
      Object.assign(counted, await copy.unpack(ensureFerretBinary(cacheDir), snapshot.db));
      migrations.push(...(manifest.migrations ?? []));
    }
    const differ = Object.keys({ ...counted, ...manifest.collections }).filter((c) => counted[c] !== manifest!.collections[c]);
    if (differ.length || keys !== manifest.redis_keys) throw new BackupFileError(`${file} does not hold what its manifest says (${differ.join(', ') || 'Redis keys'})`);
    const unknown = unknownMigrations(migrations);
    if (unknown.length) throw new BackupFileError(`${file} was made by a newer Lookout (${manifest.lookout_version}; its store has migration ${unknown.join(', ')}): restore it with that release or a later one`);
    return { manifest, bounds, copy: snapshot && copy ? { dir: copy.dir, db: snapshot.db, remove: copy.remove } : null };
  } catch (err) {
    await (copy as PackedCopy | null)?.remove();
    throw err;
  }
}

export interface RestoreDeps {
  db: Db;
  redis: RedisClient;
  prefix: string;
  log: Logger;
  /** where the embedded FerretDB's binary is built: a backup holding the embedded store's copy is read through one */
  cacheDir: string;
  /** each project's hot state and rollups rebuilt from what was restored (`lookout admin recount`) */
  rebuild: (project: number) => Promise<unknown>;
}

type Item = { collection: string } | { document: Record<string, unknown> } | { redisKey: { key: string; ttl_ms: number; value: Buffer } };

/** What a verified file holds, in the order it was read: collections and their documents, then Redis keys. */
async function* itemsOf(file: string, v: Verified, cacheDir: string): AsyncGenerator<Item> {
  if (v.copy) {
    const db = await openSnapshot({ dir: v.copy.dir, db: v.copy.db, cacheDir });
    try {
      for (const name of readingOrder(Object.keys(v.manifest.collections))) {
        yield { collection: name };
        for await (const raw of db.db.collection(name).find({}, { raw: true, batchSize: 2000 })) yield { document: bodyOf(raw as unknown as Buffer, true) };
      }
    } finally {
      await db.close();
    }
  }
  for await (const { kind, body } of readRecords(file, v.bounds)) {
    if (kind === 'c') yield { collection: bodyOf<{ name: string }>(body).name };
    else if (kind === 'd') yield { document: bodyOf(body, true) };
    else if (kind === 'k') {
      const k = bodyOf<{ key: string; ttl_ms: number; value: { buffer: Uint8Array } }>(body);
      yield { redisKey: { key: k.key, ttl_ms: k.ttl_ms, value: Buffer.from(k.value.buffer) } };
    }
  }
}

/** Restores a verified file onto an empty store (or, with `replace`, in place of what it holds). */
export async function restore(deps: RestoreDeps, file: string, opts: { replace: boolean }): Promise<{ manifest: Manifest; projects: number }> {
  const v = await verified(file, deps.cacheDir);
  try {
    return await restoreVerified(deps, file, v, opts);
  } finally {
    await v.copy?.remove();
  }
}

async function restoreVerified(deps: RestoreDeps, file: string, v: Verified, opts: { replace: boolean }): Promise<{ manifest: Manifest; projects: number }> {
  const { manifest } = v;
  const occupied = [];
  for (const name of OCCUPIED_BY) if ((await deps.db.collection(name).estimatedDocumentCount()) > 0) occupied.push(name);
  if (occupied.length && !opts.replace) throw new BackupFileError(`the store is not empty (${occupied.join(', ')} hold documents); restore onto an empty one, or pass --replace to put the backup in place of what it holds`);
  if (opts.replace) for (const name of Object.keys(manifest.collections)) await deps.db.collection(name).deleteMany({});

  let current: string | null = null;
  const batch: Record<string, unknown>[] = [];
  const flush = async () => {
    if (current === null || batch.length === 0) return;
    const docs = batch.splice(0);
    if (REPLACED.has(current)) {
      await deps.db.collection(current).bulkWrite(docs.map((d) => ({ replaceOne: { filter: { _id: d._id as never }, replacement: d, upsert: true } })), { ordered: true });
    } else await deps.db.collection(current).insertMany(docs, { ordered: true });
  };
  const decisions: { key: string; ttl_ms: number; value: Buffer }[] = [];
  for await (const item of itemsOf(file, v, deps.cacheDir)) {
    if ('collection' in item) {
      await flush();
      current = item.collection;
      if (REPLACED.has(current)) await deps.db.collection(current).deleteMany({});
    } else if ('document' in item) {
      batch.push(item.document);
      if (batch.length >= 500) await flush();
    } else decisions.push(item.redisKey);
  }
  await flush();
  // a backup of an earlier release: its store brought to this one's format
  await runMigrations(deps.db, deps.log);

  const projects = (await deps.db.collection<{ _id: number }>('projects').find({}, { projection: { _id: 1 } }).toArray()).map((p) => p._id);
  if (!manifest.without_events) {
    const requeued = await requeueOrphanGroups(deps.db);
    if (requeued > 0) deps.log.info({ groups: requeued }, 'event groups whose issue the backup lacks are back on the backlog');
    for (const project of projects) await deps.rebuild(project);
    // the decisions are the backup's: none made since (with --replace) outlive it
    for await (const found of decisionKeys(deps.redis, deps.prefix)) await deps.redis.del(found.key);
    for (const d of decisions) {
      const at = d.key.indexOf(':');
      const name = `${projectKeys(deps.prefix, Number(d.key.slice(0, at))).base}${d.key.slice(at + 1)}`;
      await deps.redis.restore(name, d.ttl_ms, d.value, 'REPLACE');
    }
  }
  deps.log.info({ file, projects: projects.length }, 'backup restored');
  return { manifest, projects: projects.length };
}

/**
 * The groups holding an error event whose issue the backup does not hold (made while it ran, after the issues were
 * read) go back on the backlog: the rebuild leaves them to their jobs, which the sweeper enqueues.
 */
async function requeueOrphanGroups(db: Db): Promise<number> {
  const known = new Set((await db.collection<{ project_id: number; fingerprint: string }>('issues').find({}, { projection: { project_id: 1, fingerprint: 1 } }).toArray()).map((i) => `${i.project_id}:${i.fingerprint}`));
  const groups = new Set<string>();
  for await (const e of db.collection<{ project_id: number; fingerprint?: string | null; batch: string }>('events').find({ kind: 'error' }, { projection: { project_id: 1, fingerprint: 1, batch: 1 } })) {
    if (e.fingerprint && !known.has(`${e.project_id}:${e.fingerprint}`)) groups.add(e.batch);
  }
  const backlog = db.collection<{ _id: string; received_at: Date }>('event_backlog');
  for (const marker of await backlog.find({}, { projection: { _id: 1 } }).toArray()) groups.delete(marker._id);
  // received long ago: the sweeper enqueues them at once
  if (groups.size > 0) await backlog.insertMany([...groups].map((_id) => ({ _id, received_at: new Date(0) })), { ordered: false });
  return groups.size;
}
