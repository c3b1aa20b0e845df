/**
 * The restore drill (issue 71): a project with sessions, errors, a sign-in burst and its decision, feedback and
 * attachments, an API token, an installation bound to it; `lookout admin backup` while events keep arriving;
 * `lookout admin restore` into a fresh store; then Lookout started on it as if it had never stopped.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { browserEvent, uploadBrowserBundle } from '../bench/sourcemaps.ts';
import { backup, backupDepsOf, restore } from '../src/backup/backup.ts';
import { payloadOf } from '../src/store/events.store.ts';
import { startWorkers } from '../workers/main.ts';
import { boundProject, call, drained, eventId, rollupsAndRecount, startTestContext, testEnv, type TestContext } from './helpers/context.ts';
import { runCli } from './helpers/process.ts';
import { until } from './helpers/until.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-backup-'));
const closing: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closing.reverse()) await close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function stack(env: Record<string, string> = {}) {
  const ctx = await startTestContext({ FLUSH_INTERVAL_MS: '100', ...env });
  const workers = await startWorkers(ctx.runtime, { queues: ['events', 'sessions'] });
  closing.push(() => workers.close(), () => ctx.close());
  return ctx;
}

const lines = (...parts: unknown[]) => parts.map((p) => JSON.stringify(p)).join('\n');
/** Seven issues, and (`fresh`) a new one every 40th event: issues made while the backup runs, whose events it may hold without them. */
const errorEvent = (n: number, fresh = false) => ({
  event_id: eventId(),
  timestamp: new Date().toISOString(),
  release: 'shop@1.0.0',
  exception: { values: [{ type: fresh && n % 40 === 0 ? `LateError${n}` : `DrillError${n % 7}`, value: 'failed during the drill' }] },
  extra: { n },
});

/** Everything a restore must bring back, as the API and the stores show it. */
async function picture(ctx: TestContext, p: { id: number; secret: string; instance: string }) {
  const auth = { key: p.secret, instance: p.instance };
  const issues = (await call(ctx, 'GET', '/api/v1/issues?limit=100', auth)).body.issues as { id: string; title: string; event_count: number; status: string }[];
  return {
    issues: issues.map((i) => ({ id: i.id, title: i.title, event_count: i.event_count, status: i.status })).sort((a, b) => Number(a.id) - Number(b.id)),
    decisions: (await ctx.runtime.decisions.list(p.id, new Date())).decisions.map((d: { id: string }) => d.id).sort(),
    releases: (await call(ctx, 'GET', '/api/v1/releases', auth)).body,
  };
}

describe('backup and restore: the drill', () => {
  it('restores everything acknowledged before the backup began, taken while events kept arriving, into a fresh store', { timeout: 180_000 }, async () => {
    const a = await stack();
    const p = await boundProject(a);
    await a.runtime.admin.setAlerts(p.id, { threshold: 5 });
    // sessions, errors, a burst with its decision, feedback, an attachment, a token
    for (let i = 0; i < 20; i++) {
      const res = await call(a, 'POST', '/api/v1/sessions', { key: p.publicKey, body: { sid: `drill-session-${i}`, release: '1.0.0', status: i % 5 === 0 ? 'crashed' : 'ok', started: new Date().toISOString() } });
      expect(res.body).toMatchObject({ accepted: 1 });
    }
    const before: string[] = [];
    for (let i = 0; i < 30; i++) {
      const e = errorEvent(i);
      expect((await p.send(e)).status).toBe(202);
      before.push(e.event_id);
    }
    for (let i = 0; i < 6; i++) expect((await p.send({ event_id: eventId(), timestamp: new Date().toISOString(), security: { kind: 'login_failed', actor: 'mallory', ip: '203.0.113.9' } })).status).toBe(202);
    const envelope = `/api/${p.id}/envelope/?sentry_key=${p.publicKey}`;
    const withFile = eventId();
    const file = Buffer.from('attached log line\n');
    const body = Buffer.concat([
      Buffer.from(`${lines({ event_id: withFile }, { type: 'event' }, { event_id: withFile, exception: { values: [{ type: 'UploadError', value: 'with a file' }] } })}\n`),
      Buffer.from(`${JSON.stringify({ type: 'attachment', filename: 'log.txt', length: file.length })}\n`),
      file,
      Buffer.from(`\n${lines({ type: 'user_report' }, { event_id: withFile, name: 'Ann', email: 'ann@example.com', comments: 'It broke' })}`),
    ]);
    const sent = await fetch(`${a.api}${envelope}`, { method: 'POST', headers: { 'content-type': 'application/x-sentry-envelope' }, body: new Uint8Array(body) });
    expect(sent.status).toBe(200);
    before.push(withFile);
    const bundle = await uploadBrowserBundle(a.runtime, p.id);
    const org = Number(p.org.id);
    await a.runtime.accounts.addUser({ org, email: 'dev@shop.test', role: 'member', password: 'correct horse battery staple' });
    const { token } = await a.runtime.tokens.create({ email: 'dev@shop.test', org }, { name: 'tools', scopes: ['org:read', 'project:read'] });
    await drained(a);
    await until(async () => (await a.runtime.decisions.list(p.id, new Date())).decisions.length === 1);

    // the backup, while about 500 events a second keep arriving
    const out = path.join(dir, 'drill.lookout-backup');
    let load = true;
    const acked: { id: string; at: number }[] = [];
    const sending = (async () => {
      let n = 1000;
      while (load) {
        const started = Date.now();
        await Promise.all(
          Array.from({ length: 10 }, async () => {
            const e = errorEvent(n++, true);
            if ((await p.send(e)).status === 202) acked.push({ id: e.event_id, at: Date.now() });
          }),
        );
        await new Promise((r) => setTimeout(r, Math.max(0, 20 - (Date.now() - started))));
      }
    })();
    await new Promise((r) => setTimeout(r, 1000));
    const backupBegan = Date.now();
    const made = await runCli(['admin', 'backup', '--out', out], a.env);
    load = false;
    await sending;
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    const manifest = JSON.parse(made.stdout) as { collections: Record<string, number>; redis_keys: number; bytes: number; snapshot?: unknown };
    // on the embedded store, a copy of its SQLite file
    if (a.runtime.mongo.profile.singleWriter) expect(manifest.snapshot).toMatchObject({ store: 'ferretdb-sqlite' });
    expect(manifest.collections.events).toBeGreaterThanOrEqual(before.length);
    expect(manifest.redis_keys).toBeGreaterThan(0);
    expect(fs.existsSync(`${out}.partial`)).toBe(false);
    const ackedBefore = acked.filter((x) => x.at < backupBegan).map((x) => x.id);
    expect(ackedBefore.length).toBeGreaterThan(20);
    await drained(a);

    // a damaged copy is refused before anything is written
    const damaged = path.join(dir, 'damaged.lookout-backup');
    const bytes = fs.readFileSync(out);
    bytes[Math.floor(bytes.length / 2)]! ^= 0x01;
    fs.writeFileSync(damaged, bytes);
    const elsewhere = testEnv();
    const refused = await runCli(['admin', 'restore', '--in', damaged], elsewhere);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/damaged/);

    // the restore into a fresh store, then Lookout started on it
    const target = testEnv();
    const restored = await runCli(['admin', 'restore', '--in', out], target);
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    const b = await stack({ MONGODB_DB: target.MONGODB_DB!, QUEUE_PREFIX: target.QUEUE_PREFIX! });
    const damagedTarget = await startTestContext({ MONGODB_DB: elsewhere.MONGODB_DB!, QUEUE_PREFIX: elsewhere.QUEUE_PREFIX! });
    closing.push(() => damagedTarget.close());
    expect(await damagedTarget.runtime.mongo.db.collection('orgs').countDocuments()).toBe(0);
    await drained(b);

    // every event acknowledged before the backup began is there; each one there is whole
    const stored = new Map((await b.runtime.stores.events.getMany([...before, ...ackedBefore].map((id) => `${p.id}:${id}`))).map((d) => [(d as { event_id: string }).event_id, d]));
    expect([...before, ...ackedBefore].filter((id) => !stored.has(id))).toEqual([]);
    for (const e of await b.runtime.mongo.db.collection('events').find({ project_id: p.id, kind: 'error' }).toArray()) expect(e.payload).toBeTruthy();
    // issues and rollups equal a recount; the stored events are each counted once
    const { stored: rollups, recounted } = await rollupsAndRecount(b, p.id);
    expect(rollups).toEqual(recounted);
    const errors = await b.runtime.mongo.db.collection('events').countDocuments({ project_id: p.id, kind: 'error' });
    await until(async () => (await picture(b, p)).issues.filter((i) => /^(Drill|Late|Upload)/.test(i.title)).reduce((n, i) => n + i.event_count, 0) === errors, 30_000);
    // what the source showed of everything from before the backup, the restored instance shows
    const was = await picture(a, p);
    const is = await picture(b, p);
    expect(is.decisions).toEqual(was.decisions);
    expect(is.releases).toEqual(was.releases);
    expect(is.issues.map((i) => i.id)).toEqual(expect.arrayContaining(was.issues.filter((i) => !/^(Drill|Late)/.test(i.title)).map((i) => i.id)));
    // the feedback and the attachment, with their event
    const upload = is.issues.find((i) => i.title.startsWith('UploadError'))!;
    expect((await call(b, 'GET', `/api/v1/issues/${upload.id}/feedback`, { key: p.secret, instance: p.instance })).body.total).toBe(1);
    const shown = (await call(b, 'GET', `/api/v1/issues/${upload.id}/events/${withFile}`, { key: p.secret, instance: p.instance })).body;
    expect(shown.attachments).toEqual([expect.objectContaining({ filename: 'log.txt', size: file.length, kept: true })]);
    // the bound installation goes on without activating again; its decisions feed answers
    expect((await p.send(errorEvent(1))).status).toBe(202);
    const again = await call(b, 'POST', '/api/v1/events', { key: p.secret, instance: p.instance, body: errorEvent(2) });
    expect(again.status).toBe(202);
    expect((await call(b, 'GET', '/api/v1/sdk/decisions', { key: p.secret, instance: p.instance })).body.decisions).toHaveLength(1);
    expect((await call(b, 'POST', '/api/v1/sdk/activate', { key: p.secret, body: { instance_id: 'another-installation' } })).status).toBe(409);
    // the source maps: an error thrown in the bundle is mapped to its sources
    const thrown = eventId();
    expect((await call(b, 'POST', '/api/v1/events', { key: p.secret, instance: p.instance, raw: browserEvent(bundle, 3, { event_id: thrown, timestamp: new Date().toISOString() }) })).status).toBe(202);
    await drained(b);
    const mapped = (await b.runtime.stores.events.getMany([`${p.id}:${thrown}`]))[0] as { payload: unknown };
    expect(JSON.stringify(payloadOf(mapped as never))).toContain('checkoutStep3');
    // the token and the member's password work
    const projects = await fetch(`${b.api}/api/0/organizations/`, { headers: { authorization: `Bearer ${token}` } });
    expect(projects.status).toBe(200);
  });

  it("reads the same through the driver (as from MongoDB) as from the embedded store's copy", { timeout: 120_000 }, async () => {
    const a = await stack();
    const p = await boundProject(a);
    for (let i = 0; i < 20; i++) expect((await p.send(errorEvent(i))).status).toBe(202);
    for (let i = 0; i < 10; i++) await call(a, 'POST', '/api/v1/sessions', { key: p.publicKey, body: { sid: `same-${i}`, release: '1.0.0', status: 'ok', started: new Date().toISOString() } });
    await drained(a);
    const deps = backupDepsOf(a.runtime);
    if (a.runtime.mongo.profile.singleWriter) expect(deps.sqliteFile).toMatch(/\.sqlite$/);
    const [copied, read] = [path.join(dir, 'copied.lookout-backup'), path.join(dir, 'read.lookout-backup')];
    const viaCopy = await backup(deps, copied, { withoutEvents: false });
    const viaDriver = await backup({ ...deps, sqliteFile: null }, read, { withoutEvents: false });
    expect(viaDriver.snapshot).toBeUndefined();
    expect(viaCopy.collections).toEqual(viaDriver.collections);
    // each restored into a store of its own: the same documents
    const restored = [];
    for (const file of [copied, read]) {
      const env = testEnv();
      const t = await startTestContext({ MONGODB_DB: env.MONGODB_DB!, QUEUE_PREFIX: env.QUEUE_PREFIX! });
      closing.push(() => t.close());
      const rt = t.runtime;
      await restore({ db: rt.mongo.db, redis: rt.redis, prefix: rt.config.queuePrefix, log: rt.log, cacheDir: rt.config.cacheDir, rebuild: (project) => rt.keeper.rebuild(project, new Date()) }, file, { replace: false });
      const contents: Record<string, string[]> = {};
      for (const name of Object.keys(viaDriver.collections).sort()) contents[name] = (await rt.mongo.db.collection(name).find({}).toArray()).map((d) => JSON.stringify(d)).sort();
      restored.push(contents);
    }
    expect(Object.keys(restored[0]!)).toEqual(Object.keys(restored[1]!));
    for (const name of Object.keys(restored[0]!)) expect([name, restored[0]![name]]).toEqual([name, restored[1]![name]]);
  });
});
