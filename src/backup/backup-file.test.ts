import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BSON, Binary, Long } from 'mongodb';
import { afterAll, describe, expect, it } from 'vitest';
import { bodyOf, checkSum, openBackupWriter, readRecords, type Manifest } from './backup-file.ts';
import { readingOrder, verifyBackup } from './backup.ts';
import { rootPath } from '../util/paths.ts';

/** only a file holding the embedded store's copy needs the FerretDB binary built there */
const CACHE_DIR = rootPath('.cache');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-backup-file-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const manifest: Manifest = { format: 1, lookout_version: '0.1.0', started_at: 'a', finished_at: 'b', without_events: false, collections: { events: 2 }, redis_keys: 1, needs: '' };

async function written(name: string) {
  const file = path.join(dir, name);
  const w = await openBackupWriter(file);
  await w.collection('events');
  const docs = [
    { _id: 'p:1', n: 1, big: Long.fromString('9007199254740993'), at: new Date(5), data: new Binary(Buffer.from([0, 1, 2])) },
    { _id: 'p:2', n: 2.5, text: 'x'.repeat(200_000) },
  ];
  for (const d of docs) await w.document(Buffer.from(BSON.serialize(d)));
  await w.redisKey({ key: '1:da', ttl_ms: 0, value: Buffer.from('dump') });
  await w.finish(manifest);
  return { file, docs };
}

async function records(file: string) {
  const out = [];
  for await (const r of readRecords(file, await checkSum(file))) out.push({ kind: r.kind, body: bodyOf(r.body, true) });
  return out;
}

describe('the backup file', () => {
  it('gives back every record as written, every BSON type kept, the manifest last', async () => {
    const { file, docs } = await written('whole');
    expect(fs.existsSync(`${file}.partial`)).toBe(false);
    const read = await records(file);
    expect(read.map((r) => r.kind)).toEqual(['c', 'd', 'd', 'k', 'm']);
    const first = read[1]!.body as Record<string, unknown>;
    expect(String(first.big)).toBe('9007199254740993');
    expect(first.at).toEqual(docs[0]!.at);
    expect(Buffer.from((first.data as Binary).buffer)).toEqual(Buffer.from([0, 1, 2]));
    expect(BSON.serialize(read[2]!.body)).toEqual(BSON.serialize(docs[1]!));
    expect(bodyOf(Buffer.from(BSON.serialize(manifest)))).toEqual(manifest);
  });

  it('refuses a file with any one byte changed, one cut short, and one that is not a backup', async () => {
    const { file } = await written('damaged');
    const bytes = fs.readFileSync(file);
    for (const at of [20, Math.floor(bytes.length / 2), bytes.length - 30]) {
      const copy = Buffer.from(bytes);
      copy[at]! ^= 0x40;
      fs.writeFileSync(`${file}.${at}`, copy);
      await expect(checkSum(`${file}.${at}`)).rejects.toThrow(/damaged|incomplete/);
    }
    fs.writeFileSync(`${file}.short`, bytes.subarray(0, bytes.length - 100));
    await expect(checkSum(`${file}.short`)).rejects.toThrow(/incomplete|damaged/);
    fs.writeFileSync(`${file}.other`, 'hello, this is not a backup at all, not even close to one, no: it is text');
    await expect(checkSum(`${file}.other`)).rejects.toThrow(/not a Lookout backup/);
    await expect(checkSum(path.join(dir, 'missing'))).rejects.toThrow(/no such file/);
  });
});

/** `file` rewritten as format `format` wrote it: its first line's number changed, its checksum made again. */
function asFormat(file: string, format: number): string {
  const bytes = fs.readFileSync(file);
  const head = Buffer.from(`LOOKOUT-BACKUP ${format}\n`);
  const body = Buffer.concat([head, bytes.subarray(head.length, bytes.length - 'LOOKOUT-SHA256 '.length - 65)]);
  const out = `${file}.format-${format}`;
  fs.writeFileSync(out, Buffer.concat([body, Buffer.from(`LOOKOUT-SHA256 ${crypto.createHash('sha256').update(body).digest('hex')}\n`)]));
  return out;
}

describe('formats', () => {
  it('reads a file of format 1 (before the embedded store was copied whole) and refuses one of a later format', async () => {
    const { file } = await written('formats');
    expect(fs.readFileSync(file).subarray(0, 17).toString()).toBe('LOOKOUT-BACKUP 2\n');
    expect((await verifyBackup(asFormat(file, 1), CACHE_DIR)).collections).toEqual({ events: 2 });
    await expect(checkSum(asFormat(file, 3))).rejects.toThrow(/a backup of another format \(LOOKOUT-BACKUP 3\); this Lookout reads formats 1 and 2/);
  });
});

describe('the order collections are read in', () => {
  it.each([
    [['events', 'counters', 'issues', 'event_backlog', 'orgs'], ['event_backlog', 'issues', 'events', 'orgs', 'counters']],
    [['session_raw', 'session_backlog', 'releases'], ['session_backlog', 'releases', 'session_raw']],
    [['orgs'], ['orgs']],
  ])('%j → %j', (names, order) => {
    expect(readingOrder(names)).toEqual(order);
  });
});

describe('a backup a newer Lookout made', () => {
  it('is refused before anything is written: its store has a migration this one does not know', async () => {
    const file = path.join(dir, 'newer');
    const w = await openBackupWriter(file);
    await w.collection('migrations');
    await w.document(Buffer.from(BSON.serialize({ _id: '999-from-the-future', ran_at: new Date() })));
    await w.finish({ ...manifest, lookout_version: '9.0.0', collections: { migrations: 1 }, redis_keys: 0 });
    await expect(verifyBackup(file, CACHE_DIR)).rejects.toThrow(/made by a newer Lookout \(9\.0\.0; its store has migration 999-from-the-future\)/);
  });
});
