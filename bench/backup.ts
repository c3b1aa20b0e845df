/**
 * npm run bench:backup -- [--sessions 1000000] [--events 200000] [--seconds 20] [--backups 3] [--restore false]
 *
 * Backups and restores at size (issue 71), on a stack of its own (embedded FerretDB and Redis, one API, one
 * worker): `--sessions` sessions (100 a batch) and `--events` events (one in five a ~3.5 KB error event, the others
 * sign-in attempts) posted over HTTP, applied by the worker. Then:
 *
 * 1. ingestion alone for `--seconds` (events at 200/s, sessions at 1,000/s), then the same load again while
 *    `lookout admin backup` runs, started two seconds in; `--backups` times, each stream's requests pooled: their
 *    p99 alone and while a backup ran, each backup's time, and the rate of the slowest over the database's size;
 * 3. `lookout admin restore` of the file into an empty database on the same stores: its time (`--restore false`:
 *    none, when tuning the backup).
 *
 * Printed beside the data folder's size (FerretDB's SQLite files) and the backup file's. Targets (issue 71): the
 * backup reads at least 20 MB/s of stored data, ingestion p99 while it runs within 1.5× of the baseline, the file at
 * most half the data folder.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { eventStream, openLoop, sessionStreams } from './load.ts';
import { BENCH_INSTANCE, hostUse, hostUseWords, hostWorkMs, openBench, report, round, waitFor } from './lib.ts';

const { values } = parseArgs({ options: { sessions: { type: 'string' }, events: { type: 'string' }, seconds: { type: 'string' }, restore: { type: 'string' }, backups: { type: 'string' } }, strict: true });
const BACKUPS = Number(values.backups ?? 3);
const RESTORE = values.restore !== 'false';
const SESSIONS = Number(values.sessions ?? 1_000_000);
const EVENTS = Number(values.events ?? 200_000);
const SECONDS = Number(values.seconds ?? 20);
const FILL_SECONDS = 200;
const BIN = fileURLToPath(new URL('../bin/lookout.mjs', import.meta.url));
const log = (line: string) => process.stderr.write(`bench:backup: ${line}\n`);

const workMs = hostWorkMs();
const bench = await openBench({ seconds: SECONDS, concurrency: 1, workers: 1, workerConcurrency: 4 });
const { stack, runtime, project } = bench;
const eventHeaders = { 'content-type': 'application/json', 'x-service-key': project.secret_key, 'x-service-instance': BENCH_INSTANCE };
const sessionHeaders = { 'content-type': 'application/json', 'x-service-key': project.public_key };
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-bench-backup-'));

/** A load of both streams for `seconds`, each request traced (when it was due, its latency). */
async function load(seconds: number, rates: { events: number; sessions: number }, trace?: string) {
  const [events, sessions] = await Promise.all([
    openLoop('events', stack.apiUrls, eventHeaders, [eventStream(rates.events)], seconds, 0, trace),
    openLoop('sessions', stack.apiUrls, sessionHeaders, sessionStreams(rates.sessions, 0).slice(0, 1), seconds, 0, trace),
  ]);
  return { events: events.events!, sessions: sessions['session batches']! };
}

function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr, ms: performance.now() - started }));
  });
}

function folderBytes(folder: string): number {
  let bytes = 0;
  for (const e of fs.readdirSync(folder, { withFileTypes: true, recursive: true })) if (e.isFile()) bytes += fs.statSync(path.join(e.parentPath, e.name)).size;
  return bytes;
}

/** Latencies (ms) of the traced requests of `load` due within [from, to] (epoch ms), sorted. */
function tracedWithin(trace: string, load: string, from: number, to: number): number[] {
  return fs
    .readFileSync(trace, 'utf8')
    .split('\n')
    .map((l) => l.split(','))
    .filter((f) => f[0] === load && Number(f[2]) >= from && Number(f[2]) <= to)
    .map((f) => Number(f[3]))
    .sort((a, b) => a - b);
}

const p99Of = (ms: number[]) => round(ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))] ?? 0);

function p99Within(trace: string, load: string, from: number, to: number): { p99_ms: number; requests: number; by_second: number[] } {
  const ms = tracedWithin(trace, load, from, to);
  const bySecond = [];
  for (let at = from; at < to; at += 1000) bySecond.push(p99Of(tracedWithin(trace, load, at, Math.min(to, at + 999))));
  return { p99_ms: p99Of(ms), requests: ms.length, by_second: bySecond };
}

try {
  log(`filling: ${SESSIONS} sessions and ${EVENTS} events over ${FILL_SECONDS} s`);
  const filled = await load(FILL_SECONDS, { events: EVENTS / FILL_SECONDS, sessions: SESSIONS / FILL_SECONDS });
  log(`filled: ${filled.sessions.answered * 100} sessions and ${filled.events.answered} events acknowledged; waiting for the worker`);
  await waitFor(async () => (await runtime.stores.events.backlog.size()) + (await runtime.stores.sessions.backlog.size()) === 0, 600_000);
  const dataBytes = folderBytes(stack.dataDirs.ferretdb);

  const rates = { events: 200, sessions: 1000 };
  // Several backups, each after a stretch of ingestion alone, their requests pooled: session batches come ten a
  // second, so one backup of 8 s gave ~80 of them, and its p99 was its one slowest request.
  const runs: { alone: string; trace: string; file: string; began: number; ended: number; host: ReturnType<ReturnType<typeof hostUse>>; seconds: number; manifest: { waited_ms: number } }[] = [];
  for (let i = 0; i < BACKUPS; i++) {
    log(`backup ${i + 1} of ${BACKUPS}: ${SECONDS} s of ingestion alone, then the same load with a backup running`);
    const alone = path.join(dir, `alone-${i}.csv`);
    await load(SECONDS, rates, alone);
    const trace = path.join(dir, `during-${i}.csv`);
    const file = path.join(dir, `lookout-${i}.backup`);
    const use = hostUse(stack);
    const during = load(SECONDS, rates, trace);
    await new Promise((r) => setTimeout(r, 2000));
    const began = Date.now();
    const made = await cli(['admin', 'backup', '--out', file], stack.env);
    const ended = Date.now();
    await during;
    const host = use();
    if (made.code !== 0) throw new Error(`backup failed: ${made.stderr}`);
    runs.push({ alone, trace, file, began, ended, host, seconds: (ended - began) / 1000, manifest: JSON.parse(made.stdout) as { waited_ms: number } });
  }
  const pooled = (stream: string, window: 'alone' | 'during') =>
    runs.flatMap((r) => (window === 'alone' ? tracedWithin(r.alone, stream, 0, Infinity) : tracedWithin(r.trace, stream, r.began, r.ended))).sort((a, b) => a - b);
  const p99s = (stream: string) => {
    const during = pooled(stream, 'during');
    return { alone: p99Of(pooled(stream, 'alone')), during: p99Of(during), requests: during.length };
  };
  const [events, sessions] = [p99s('events'), p99s('sessions')];
  const file = runs.at(-1)!.file;
  const fileBytes = fs.statSync(file).size;
  const slowest = Math.max(...runs.map((r) => r.seconds));

  let restored = { ms: NaN };
  if (RESTORE) {
    log('restore into an empty database');
    const target = { ...stack.env, MONGODB_DB: 'lookout_restored', QUEUE_PREFIX: 'restored' };
    const made = await cli(['admin', 'restore', '--in', file], target);
    if (made.code !== 0) throw new Error(`restore failed: ${made.stderr}`);
    restored = made;
  }

  const mb = (b: number) => round(b / 1024 / 1024, 1);
  const ratio = (p: { alone: number; during: number }) => round(p.during / p.alone, 2);
  const rows: [string, string | number | null][] = [
    ['host', `work baseline ${workMs} ms; during the backups (their own processes not counted): ${runs.map((r) => hostUseWords(r.host)).join('; ')}`],
    ['stored', `${SESSIONS} sessions, ${EVENTS} events: data folder ${mb(dataBytes)} MB`],
    ['backups', `${runs.map((r) => `${round(r.seconds, 1)} s (${round(r.manifest.waited_ms / 1000, 1)} s of it waiting for a repack or retention run)`).join(', ')}: ${round(dataBytes / 1024 / 1024 / slowest, 1)} MB/s of stored data at the slowest (target ≥ 20)`],
    ['backup file', `${mb(fileBytes)} MB, ${round((100 * fileBytes) / dataBytes, 1)}% of the data folder (target ≤ 50%)`],
    ['events p99', `${events.alone} ms alone → ${events.during} ms during the backups (${events.requests} requests): ${ratio(events)}× (target ≤ 1.5×)`],
    ['… each second', runs.map((r) => `${p99Within(r.trace, 'events', r.began, r.ended).by_second.join(', ')} ms`).join('; ')],
    ['session batches p99', `${sessions.alone} ms alone → ${sessions.during} ms during the backups (${sessions.requests} requests): ${ratio(sessions)}× (target ≤ 1.5×)`],
    ['restore', RESTORE ? `${round(restored.ms / 1000, 1)} s (checked whole, written, recounted)` : 'not run (--restore false)'],
  ];
  report('bench:backup', { host_work_ms: workMs, data_bytes: dataBytes, file_bytes: fileBytes, backup_s: runs.map((r) => r.seconds), restore_s: restored.ms / 1000, events, sessions, manifests: runs.map((r) => r.manifest) }, rows);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
  await bench.close();
}
