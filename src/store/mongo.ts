/**
 * MongoDB connection. Every write is acknowledged by the majority and
 * journaled (`w: majority, j: true`): a 2xx is sent only after the data it
 * stands for is durable.
 */
import { MongoClient, MongoServerError, type Collection, type Db, type Document, type IndexDescription, type OptionalUnlessRequiredId } from 'mongodb';
import { traceCommands } from './command-trace.ts';

/**
 * What the store serves, so code shaped around the embedded FerretDB asks rather than assumes. FerretDB answers
 * buildInfo with a `ferretdbVersion`; v1 on SQLite answers no query by a secondary field from an index, has one
 * writer, and expires nothing by TTL. MongoDB does all three.
 */
export interface StoreProfile {
  /** a query by a secondary field is answered from an index (else indexes only slow every insert) */
  secondaryIndexes: boolean;
  /** one writer serves every client: a process keeps one write in flight, more would only queue */
  singleWriter: boolean;
  /** TTL indexes expire documents (the retention job deletes them on every store regardless) */
  ttl: boolean;
}

export interface Mongo {
  client: MongoClient;
  db: Db;
  profile: StoreProfile;
}

export function profileOf(buildInfo: Document): StoreProfile {
  const mongodb = !('ferretdbVersion' in buildInfo);
  return { secondaryIndexes: mongodb, singleWriter: !mongodb, ttl: mongodb };
}

/** `traceDir`: where the store's command trace goes (`STORE_TRACE_DIR`); unset, nothing is traced. */
export async function connectMongo(url: string, dbName: string, timeoutMs = 10_000, traceDir?: string | null): Promise<Mongo> {
  const client = new MongoClient(url, {
    writeConcern: { w: 'majority', journal: true },
    serverSelectionTimeoutMS: timeoutMs,
    maxPoolSize: 50,
    appName: 'lookout',
    monitorCommands: !!traceDir,
  });
  if (traceDir) traceCommands(client, traceDir);
  await client.connect();
  const db = client.db(dbName);
  const info = await db.command({ buildInfo: 1 });
  return { client, db, profile: profileOf(info) };
}

export function isDuplicateKey(err: unknown): boolean {
  return err instanceof MongoServerError && err.code === 11000;
}

/** Inserts a document; one already there under its `_id` (another run's) stays as it is. */
export async function insertOnce<T extends Document>(collection: Collection<T>, doc: OptionalUnlessRequiredId<T>): Promise<void> {
  try {
    await collection.insertOne(doc);
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
}

/** An unordered insertMany whose only failures are documents that exist already. */
export function onlyDuplicates(err: unknown): boolean {
  const writeErrors = (err as { writeErrors?: { code: number }[] }).writeErrors;
  return isDuplicateKey(err) || (Array.isArray(writeErrors) && writeErrors.every((e) => e.code === 11000));
}

/**
 * Creates the indexes a collection lacks. FerretDB v1.24 (SQLite) panics on
 * a createIndexes that names an index that already exists, so existing
 * names are listed first and skipped.
 */
export async function ensureIndexes<T extends Document>(collection: Collection<T>, specs: IndexDescription[], attempt = 1): Promise<void> {
  let existing: string[] = [];
  try {
    existing = (await collection.listIndexes().toArray()).map((index) => index.name as string);
  } catch (err) {
    if (!(err instanceof MongoServerError && err.code === 26)) throw err; // 26: namespace does not exist yet
  }
  const missing = specs.filter((spec) => !existing.includes(spec.name!));
  if (missing.length === 0) return;
  try {
    await collection.createIndexes(missing);
  } catch (err) {
    // Another process may have created them between the list and the create.
    if (attempt >= 3) throw err;
    await ensureIndexes(collection, specs, attempt + 1);
  }
}

/** A time (ms) as text that sorts as the time does, for `_id`s read as ranges in time order. */
export const sortableMs = (ms: number): string => String(ms).padStart(15, '0');
