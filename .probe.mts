import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { MongoClient } from 'mongodb';
import { ensureFerretBinary } from './src/embedded/ferretdb.ts';
import { freePort, spawnManaged } from './src/embedded/process.ts';
import { realisticErrorEvent } from './bench/events.ts';
import { packPayload } from './src/store/events.store.ts';
import { fingerprintOf } from './src/domain/fingerprint.ts';

const binary = ensureFerretBinary(path.resolve('.cache'));
for (const page of [4096, 8192, 16384, 32768]) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probe-'));
  fs.mkdirSync(path.join(dir, 'sqlite'));
  const port = await freePort();
  const f = await spawnManaged({ name: 'ferretdb', command: binary, args: ['-listen-addr', `127.0.0.1:${port}`, '-handler', 'sqlite', '-sqlite-url', `file:${dir}/sqlite/?_pragma=page_size(${page})`], port, url: `mongodb://127.0.0.1:${port}/`, logFile: path.join(dir, 'f.log'), timeoutMs: 60000 });
  const client = await MongoClient.connect(f.url);
  const db = client.db('probe');
  const c = db.collection('events');
  const N = 4000;
  let json = 0, packed = 0;
  const docs = Array.from({ length: N }, (_, i) => {
    const body: any = { event_id: crypto.randomBytes(16).toString('hex'), timestamp: new Date().toISOString(), ...realisticErrorEvent(i, { at: new Date(), release: 'bench@1', environment: 'production', company: `company-${i % 20}`, level: 'error', large: true }) };
    json += JSON.stringify(body).length;
    const payload = packPayload(body);
    packed += (payload as any).buffer?.length ?? 0;
    return { _id: `1:${body.event_id}`, project_id: 1, event_id: body.event_id, batch: 'abcdef123456', kind: 'error', security_kind: null, actor: null, ip: null, group_key: null, fingerprint: fingerprintOf(body), release: 'bench@1', environment: 'production', company: 'company-1', at: new Date(), received_at: new Date(), payload };
  });
  await c.insertOne({ _id: 'x' }); await c.deleteMany({});
  const size = async () => { const s = await db.command({ collStats: 'events' }); return Number(s.storageSize ?? s.size) + Number(s.totalIndexSize ?? 0); };
  const before = await size();
  for (let i = 0; i < N; i += 200) await c.insertMany(docs.slice(i, i + 200));
  const ps = await db.command({ dbStats: 1 });
  console.log(page, 'bytes/event', ((await size() - before) / N).toFixed(0), 'json', (json / N).toFixed(0), 'deflated', (packed / N).toFixed(0));
  await client.close();
  await f.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
