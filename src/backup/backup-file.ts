/**
 * The backup file (issue 71): one file, compressed and checksummed, that a restore reads twice (first to verify the
 * whole of it, then to write), so a damaged file is refused before anything is written.
 *
 *   LOOKOUT-BACKUP 2\n                 magic and format version (this Lookout reads 1 and 2)
 *   gzip( record record ... )          each record: kind (1 byte), length (4 bytes, little-endian), BSON body
 *   LOOKOUT-SHA256 <64 hex>\n          SHA-256 of every byte before this line
 *
 * Records, in order: a collection (`c`: its name), then its documents (`d`: each document's BSON exactly as the
 * store gave it, so every type survives); Redis keys (`k`: name without the instance's prefix, value as Redis'
 * DUMP gave it, milliseconds to live); the manifest (`m`) last, with the count of each. Format 2 adds the embedded
 * store's copy (`s`: its compressed SQLite file, a megabyte a record, src/backup/snapshot.ts) in place of the
 * collections, and then nothing is compressed twice: such a file's records are stored, not deflated. A file is
 * written under a temporary name and renamed once complete and synced: a file under its own name is whole.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { once } from 'node:events';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { BSON, type Document } from 'mongodb';

export const BACKUP_FORMAT = 2;
/** The formats this Lookout restores: every one an earlier release wrote. */
export const READABLE_FORMATS = [1, 2];
const magicOf = (format: number) => Buffer.from(`LOOKOUT-BACKUP ${format}\n`);
const MAGIC = magicOf(BACKUP_FORMAT);
const TRAILER_WORD = 'LOOKOUT-SHA256 ';
const TRAILER_BYTES = TRAILER_WORD.length + 64 + 1;
/** A record's body is one BSON document: at most 16 MB, as MongoDB's own documents, plus room for its wrapping. */
const MOST_RECORD_BYTES = 17 * 1024 * 1024;
const SYNC_EVERY_BYTES = 8 * 1024 * 1024;

export type RecordKind = 'c' | 'd' | 'k' | 's' | 'm';
const KINDS = new Set<string>(['c', 'd', 'k', 's', 'm']);

/** What a backup holds, written last and checked against what was read. */
export interface Manifest {
  format: number;
  lookout_version: string;
  started_at: string;
  finished_at: string;
  without_events: boolean;
  /** documents per collection */
  collections: Record<string, number>;
  /** Redis keys kept (decisions): how many */
  redis_keys: number;
  /** what a restore needs that the file does not hold */
  needs: string;
  /** the collections are the embedded store's copy of database `db` (`s` records), not documents */
  snapshot?: { store: 'ferretdb-sqlite'; db: string };
  /** with a copy: the migrations its store had run (a restore refuses a newer Lookout's before writing) */
  migrations?: string[];
}

export class BackupFileError extends Error {}

/**
 * Writes records to `file` (through `file.partial`, renamed when whole); `finish` writes the manifest last.
 * `compressed`: the records come compressed (the embedded store's copy), and are stored as they are.
 */
export async function openBackupWriter(file: string, opts: { compressed?: boolean } = {}) {
  const partial = `${file}.partial`;
  const handle = await fs.promises.open(partial, 'w');
  const out = handle.createWriteStream();
  const hash = crypto.createHash('sha256');
  const gzip = zlib.createGzip({ level: opts.compressed ? 0 : 6 });
  let bytes = 0;
  let unsynced = 0;
  const hashed = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      bytes += chunk.length;
      unsynced += chunk.length;
      // synced as it goes: one flush of the whole file at its end held the store's own commits (its fsyncs) for a
      // fifth of a second
      if (unsynced < SYNC_EVERY_BYTES) return done(null, chunk);
      unsynced = 0;
      handle.datasync().then(() => done(null, chunk), done);
    },
  });
  hashed.write(MAGIC);
  const piped = pipeline(gzip, hashed, out);

  // Records go to the compressor a megabyte at a time: a write per record (two of a few bytes each) made each one a
  // trip to zlib's thread, and the backup ran at a fifth of its speed.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  async function flush(): Promise<void> {
    if (pendingBytes === 0) return;
    const chunk = Buffer.concat(pending, pendingBytes);
    [pending, pendingBytes] = [[], 0];
    if (!gzip.write(chunk)) await once(gzip, 'drain');
  }
  async function put(kind: RecordKind, body: Buffer): Promise<void> {
    const head = Buffer.alloc(5);
    head.write(kind, 0, 'latin1');
    head.writeUInt32LE(body.length, 1);
    pending.push(head, body);
    pendingBytes += head.length + body.length;
    if (pendingBytes >= 1024 * 1024) await flush();
  }

  return {
    collection: (name: string) => put('c', Buffer.from(BSON.serialize({ name }))),
    /** a document as the driver read it raw (`find(…, { raw: true })`) */
    document: (raw: Buffer) => put('d', raw),
    redisKey: (key: { key: string; ttl_ms: number; value: Buffer }) => put('k', Buffer.from(BSON.serialize(key))),
    /** the embedded store's compressed copy, written a megabyte a record */
    async snapshot(copy: string): Promise<void> {
      for await (const chunk of fs.createReadStream(copy, { highWaterMark: 1024 * 1024 })) await put('s', chunk as Buffer);
    },
    async finish(manifest: Manifest): Promise<{ bytes: number }> {
      await put('m', Buffer.from(BSON.serialize(manifest)));
      await flush();
      gzip.end();
      await piped;
      const trailer = Buffer.from(`${TRAILER_WORD}${hash.digest('hex')}\n`);
      await fs.promises.appendFile(partial, trailer);
      const whole = await fs.promises.open(partial, 'r+');
      await whole.sync();
      await whole.close();
      await fs.promises.rename(partial, file);
      return { bytes: bytes + trailer.length };
    },
    /** the partial file removed (a backup that failed leaves nothing under either name) */
    async abandon(): Promise<void> {
      gzip.destroy();
      await piped.catch(() => {});
      await fs.promises.rm(partial, { force: true });
    },
  };
}

/** The file's checksum checked: throws when the bytes are not those written. Returns the compressed part's bounds. */
export async function checkSum(file: string): Promise<{ start: number; end: number }> {
  const { size } = await fs.promises.stat(file).catch(() => {
    throw new BackupFileError(`${file}: no such file`);
  });
  if (size < MAGIC.length + TRAILER_BYTES) throw new BackupFileError(`${file} is not a Lookout backup (too short)`);
  const handle = await fs.promises.open(file, 'r');
  try {
    const head = Buffer.alloc(MAGIC.length);
    await handle.read(head, 0, head.length, 0);
    if (!READABLE_FORMATS.some((format) => head.equals(magicOf(format)))) {
      if (head.toString('latin1').startsWith('LOOKOUT-BACKUP ')) throw new BackupFileError(`${file} is a backup of another format (${head.toString('latin1').trim()}); this Lookout reads formats ${READABLE_FORMATS.join(' and ')}`);
      throw new BackupFileError(`${file} is not a Lookout backup`);
    }
    const tail = Buffer.alloc(TRAILER_BYTES);
    await handle.read(tail, 0, tail.length, size - TRAILER_BYTES);
    const trailer = tail.toString('latin1');
    if (!trailer.startsWith(TRAILER_WORD) || !trailer.endsWith('\n')) throw new BackupFileError(`${file} is incomplete: it has no checksum at its end`);
    const hash = crypto.createHash('sha256');
    for await (const chunk of fs.createReadStream(file, { start: 0, end: size - TRAILER_BYTES - 1 })) hash.update(chunk as Buffer);
    if (hash.digest('hex') !== trailer.slice(TRAILER_WORD.length, -1)) throw new BackupFileError(`${file} is damaged: its checksum does not match its contents`);
    return { start: MAGIC.length, end: size - TRAILER_BYTES - 1 };
  } finally {
    await handle.close();
  }
}

/** The records of a file whose checksum was checked, in order. */
export async function* readRecords(file: string, bounds: { start: number; end: number }): AsyncGenerator<{ kind: RecordKind; body: Buffer }> {
  const source: Readable = fs.createReadStream(file, { start: bounds.start, end: bounds.end }).pipe(zlib.createGunzip());
  let pending: Buffer = Buffer.alloc(0);
  for await (const chunk of source) {
    pending = pending.length === 0 ? (chunk as Buffer) : Buffer.concat([pending, chunk as Buffer]);
    let at = 0;
    while (pending.length - at >= 5) {
      const length = pending.readUInt32LE(at + 1);
      if (length > MOST_RECORD_BYTES) throw new BackupFileError(`${file} is damaged: a record claims ${length} bytes`);
      if (pending.length - at - 5 < length) break;
      const kind = pending.toString('latin1', at, at + 1);
      if (!KINDS.has(kind)) throw new BackupFileError(`${file} is damaged: a record of unknown kind`);
      yield { kind: kind as RecordKind, body: pending.subarray(at + 5, at + 5 + length) };
      at += 5 + length;
    }
    pending = pending.subarray(at);
  }
  if (pending.length > 0) throw new BackupFileError(`${file} is damaged: it ends inside a record`);
}

/** A record's body read as a document; `exact` keeps every number's BSON type (int32, int64, double) as stored. */
export function bodyOf<T = Document>(body: Buffer, exact = false): T {
  return BSON.deserialize(body, exact ? { promoteValues: false, promoteBuffers: false } : {}) as T;
}
