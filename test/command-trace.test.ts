/**
 * The store's command trace (STORE_TRACE_DIR) on the real FerretDB: each
 * command a client sends is one line of its process' file, with its filter's
 * shape and never a value of it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { TRACE_HEADER } from '../src/store/command-trace.ts';
import { connectMongo } from '../src/store/mongo.ts';
import { testEnv } from './helpers/context.ts';
import { until } from './helpers/until.ts';

it('writes each command with its duration, its filter without values and the documents it counted', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-trace-'));
  const env = testEnv();
  const mongo = await connectMongo(env.MONGODB_URL!, env.MONGODB_DB!, 10_000, dir);
  try {
    const docs = mongo.db.collection<{ _id: string; secret_hash: string }>('traced');
    await docs.insertMany([{ _id: 'a', secret_hash: 'hash-of-a-key' }, { _id: 'b', secret_hash: 'another-hash' }]);
    expect(await docs.find({ secret_hash: 'hash-of-a-key' }).toArray()).toHaveLength(1);
    await docs.deleteMany({ _id: { $in: ['a', 'b'] } });
    await mongo.db.dropDatabase();
  } finally {
    await mongo.client.close();
  }
  // The file is written through a stream: wait for its last command.
  const file = path.join(dir, `store-commands-${process.pid}.tsv`);
  await until(() => fs.existsSync(file) && fs.readFileSync(file, 'utf8').includes('\tdropDatabase\t'));
  const text = fs.readFileSync(file, 'utf8');
  expect(text.startsWith(TRACE_HEADER)).toBe(true);
  const lines = text.trim().split('\n').slice(1).map((line) => line.split('\t'));
  const row = (command: string) => lines.find((l) => l[2] === command && l[3] === 'traced');
  expect(row('insert')).toMatchObject({ 3: 'traced', 5: '2' });
  expect(row('find')).toMatchObject({ 4: '{"secret_hash":1}', 5: '1' });
  expect(row('delete')).toMatchObject({ 4: '{"_id":{"$in":1}}', 5: '2' });
  for (const l of lines) {
    expect(Number(l[0])).toBeGreaterThan(0);
    expect(Number(l[1])).toBeGreaterThanOrEqual(0);
  }
  expect(text).not.toContain('hash-of-a-key');
  fs.rmSync(dir, { recursive: true, force: true });
});
