/**
 * npm run bench:reads -- [--issues 20000] [--events 1000000] [--requests 1000]
 *
 * Whether the issue reads stay flat as a project grows. On a stack of its own
 * (Redis and FerretDB in a temporary folder, one `lookout api` process), two
 * projects are filled, the small one first and measured before the large
 * one exists: a tenth of the issues and events (the baseline), then all of
 * them. Events (~4 KB of realistic JSON each, src: bench/events.ts) are
 * written straight to the events collection and applied to Redis through
 * the real apply script, in groups of 2,000; issues reach MongoDB and the
 * list indexes through the real snapshot, as the flusher writes them.
 * Event counts per issue follow a Zipf law (the largest issue holds about
 * a tenth of all events), so issues with 1,250 events and more exist for
 * the 50th page of their events.
 *
 * Then, over HTTP with the project's keys, `--requests` times each (after a
 * tenth as warm-up): the issue list by default (100 a page, the API's
 * default), by each order and each filter; an issue page; its events at page
 * 1 and page 50 (25 a page, the API's default and the dashboard's); one event
 * by id. Printed: p50 and p99 of each at both sizes, and the ratio of
 * the large p99 to the small one.
 *
 * `--trace FILE`: each timed request (size, read, start in epoch ms, ms) to FILE as CSV, and Redis' commands slower
 * than 5 ms (its slow log: epoch seconds, µs, command) to FILE.redis.csv and the load generator's garbage collections
 * to FILE.gc.csv, to tell a slow read from a stall of the stack, or of the load generator, that one read met.
 * The load generator is a process of its own (`read-client.ts`), holding only the reads: this one holds the fill.
 */
import { shortIdOf } from '../src/domain/sentry-api.ts';
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { AppliedGroup } from '../src/state/apply-events.ts';
import { eventKey, packPayload, type EventDoc } from '../src/store/events.store.ts';
import type { IssueDoc } from '../src/store/issues.store.ts';
import { eventImpact, type EventImpact } from '../src/domain/event-impact.ts';
import { fingerprintOf, describeError } from '../src/domain/fingerprint.ts';
import { BENCH_INSTANCE, hostUse, hostUseWords, hostWorkMs, openBench, report, round } from './lib.ts';
import { realisticErrorEvent, word } from './events.ts';

const { values } = parseArgs({ options: { issues: { type: 'string' }, events: { type: 'string' }, requests: { type: 'string' }, trace: { type: 'string' } }, strict: true });
const LARGE = { issues: Number(values.issues ?? 20_000), events: Number(values.events ?? 1_000_000) };
const SMALL = { issues: Math.round(LARGE.issues / 10), events: Math.round(LARGE.events / 10) };
// The p99 of 1,000 reads is their tenth slowest; of 200 it was the second, and whether one of the API's old-generation
// collections (every 2 s or so while it lists: ~400 KB of each page's rows outlive a young collection) landed in two
// of them decided it more than the read did.
const REQUESTS = Number(values.requests ?? 1000);
const TRACE = values.trace;
/** When tracing, the load generator's collections (at, ms, kind: 1 minor, 4 major): its pauses lengthen what it measures. */
const collections: string[] = ['at,ms,kind'];
const traced: string[] = ['size,read,at,ms'];
const slow: string[] = ['at_s,us,command'];
const GROUP = 2000;
const RELEASES = 20;
const COMPANIES = 200;
const ENVIRONMENTS = ['production', 'staging', 'development'];
const HOUR = 3_600_000;
/** The fortnight the events span. */
const SPAN_HOURS = 14 * 24;
/** Events per user: a project ten times larger has ten times the users (5,000 in the large one). */
const EVENTS_PER_USER = 200;
const AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1',
];

const bench = await openBench({ seconds: 0, concurrency: 1, workers: 0, workerConcurrency: 1 });
const { runtime } = bench;
const log = (line: string) => process.stderr.write(`bench:reads: ${line}\n`);

/** Issue of the n-th event: Zipf with exponent 1 over `issues` kinds, drawn from a fixed sequence. */
function zipf(issues: number) {
  const cumulative = new Float64Array(issues);
  let sum = 0;
  for (let r = 0; r < issues; r++) cumulative[r] = sum += 1 / (r + 1);
  let seed = 42;
  return () => {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    const x = (seed / 2 ** 32) * sum;
    let lo = 0;
    let hi = issues - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** A project filled with `size` issues and events; answers what the reads ask for. */
async function fill(name: string, size: { issues: number; events: number }, kindOffset: number) {
  const created = await runtime.admin.createProject({ org: Number((await runtime.admin.listOrgs())[0]!.id), name, securityMonitoring: true });
  const project = Number(created.id);
  await runtime.sdk.activate((await runtime.stores.projects.get(project))!, { instance_id: `${BENCH_INSTANCE}-${name}` }, new Date());
  const now = new Date();
  await runtime.keeper.verify(project, now);
  const nextKind = zipf(size.issues);
  const users = Math.max(1, Math.round(size.events / EVENTS_PER_USER));
  const started = performance.now();
  const perIssue = new Map<number, string[]>();
  for (let done = 0; done < size.events; done += GROUP) {
    const docs: EventDoc[] = [];
    const entries: ({ doc: EventDoc; kind: number; level: string; title: string; culprit: string; exception_type: string | null; company: string } & EventImpact)[] = [];
    for (let i = done; i < Math.min(size.events, done + GROUP); i++) {
      const kind = nextKind();
      // each kind of error first happens at an hour of the fortnight (bornHours ago) and recurs from then on, so
      // that about a fourteenth of the issues are new each day at both sizes, as `age:-24h` meets them
      const bornHours = 1 + ((kind * 7919) % SPAN_HOURS);
      const at = new Date(now.getTime() - ((i * 7919) % bornHours) * HOUR - (i % 3600) * 1000);
      const company = `company-${(kind * 7 + i) % COMPANIES}`;
      const event = realisticErrorEvent(kindOffset + kind, { at, release: `shop@1.${(kind + i) % RELEASES}`, environment: ENVIRONMENTS[(kind + (i % 5 === 0 ? 1 : 0)) % 3]!, company });
      // users and browsers vary by event, as the search by user and by tag meets them
      event.user = { id: String(i % users), email: `user${i % users}@example.com` };
      (event.request as { headers: Record<string, string> }).headers['User-Agent'] = AGENTS[i % AGENTS.length]!;
      const doc: EventDoc = {
        _id: eventKey(project, event.event_id),
        project_id: project,
        event_id: event.event_id,
        batch: `bench-${name}-${done}`,
        kind: 'error',
        security_kind: null,
        actor: null,
        ip: null,
        group_key: null,
        fingerprint: fingerprintOf(event),
        release: event.release,
        environment: event.environment,
        company,
        at,
        received_at: now,
        payload: packPayload(event),
      };
      docs.push(doc);
      entries.push({ doc, kind, level: event.level!, company, ...describeError(event), ...eventImpact(event) });
    }
    await runtime.stores.events.collection.insertMany(docs, { ordered: false });
    const ids = await runtime.issuesState.issueIds(project, docs.map((d) => d.fingerprint!));
    const group: AppliedGroup = {
      id: `bench-${name}-${done}`,
      receivedAt: now,
      attempts: [],
      errors: entries.map((e) => ({
        event: e.doc._id,
        issue: ids.get(e.doc.fingerprint!)!,
        issue_kind: 'error' as const,
        at: e.doc.at,
        release: e.doc.release,
        environment: e.doc.environment ?? null,
        level: e.level,
        title: e.title,
        culprit: e.culprit,
        exception_type: e.exception_type,
        company: e.company,
        fingerprint: e.doc.fingerprint!,
        user: e.user,
        tags: e.tags,
      })),
    };
    if ((await runtime.issuesState.apply(project, [group])).code === 'unverified') throw new Error('the project state is not verified');
    for (const e of group.errors) {
      const list = perIssue.get(e.issue) ?? [];
      if (list.length < 200) list.push(e.event.split(':')[1]!);
      perIssue.set(e.issue, list);
    }
    if ((done / GROUP) % 50 === 0) log(`${name}: ${done + docs.length} of ${size.events} events stored (${round((performance.now() - started) / 1000, 1)} s)`);
  }
  // The flusher's part: changed issues to MongoDB, and into the list indexes.
  // (the snapshot reads the changed issues a chunk at a time, as the flusher does)
  const flushed: IssueDoc[] = [];
  let cursor = '0';
  do {
    const snap = await runtime.issuesState.snapshot(project, { cursor });
    await runtime.stores.issues.writeFlushed(project, snap.issues.map((i) => i.doc), snap.seq);
    await runtime.issuesState.clear(project, snap.issues.map((i) => ({ id: i.doc._id, version: i.version })));
    flushed.push(...snap.issues.map((i) => i.doc));
    cursor = snap.cursor;
  } while (cursor !== '0');
  await settle();
  const byCount = flushed.sort((a, b) => b.event_count - a.event_count);
  log(`${name}: ${size.events} events in ${flushed.length} issues, stored and applied in ${round((performance.now() - started) / 1000, 1)} s; largest issue ${byCount[0]!.event_count} events`);
  // Only what the reads name is kept: the rest of the fill (a million ids) would take memory and collections from
  // the stack while it is measured.
  const top = byCount[0]!._id;
  const deep = byCount.filter((i) => i.event_count >= 1250).slice(0, 100).map((i) => i._id);
  const org = Number(created.org);
  const email = `bench-${name}@lookout.test`;
  await runtime.accounts.addUser({ org, email, role: 'member', password: 'correct horse battery staple' });
  const { token } = await runtime.tokens.create({ email, org }, { name: 'bench', scopes: ['project:read'] });
  return {
    project,
    name,
    token,
    orgSlug: (await runtime.admin.showOrg(org)).slug!,
    slug: created.slug!,
    top,
    topEvents: perIssue.get(top)!,
    deep: deep.length > 0 ? deep : [top],
    many: byCount.slice(0, 200).map((i) => i._id),
    users,
    secret: created.secret_key,
    instance: `${BENCH_INSTANCE}-${name}`,
  };
}

/**
 * Before measuring: Redis rewrites its append-only file now rather than during the reads (a rewrite forks and
 * takes a core for seconds after a million events), and the stores are left a few seconds to finish their own work.
 */
async function settle(): Promise<void> {
  const redis = runtime.issuesState.redis;
  const rewriting = async () => /aof_rewrite_in_progress:1|aof_rewrite_scheduled:1/.test(await redis.info('persistence'));
  while (await rewriting()) await new Promise((r) => setTimeout(r, 200));
  await redis.bgrewriteaof();
  await new Promise((r) => setTimeout(r, 500));
  while (await rewriting()) await new Promise((r) => setTimeout(r, 200));
  await new Promise((r) => setTimeout(r, 3000));
}

type Filled = Awaited<ReturnType<typeof fill>>;

/** A read's path on the API (the reads name theirs under /api/v1, the baseline /healthz) and the project's keys. */
const apiPath = (path: string) => (path.startsWith('/healthz') || path.startsWith('/api/0/') ? path : `/api/v1${path}`);
/** The installation's key for the native reads, a member's API token for Sentry's (`/api/0`, issue 70). */
const keysOf = (p: Filled) => ({ 'X-Service-Key': p.secret, 'X-Service-Instance': p.instance, Authorization: `Bearer ${p.token}` });

/** A search must apply every term it names (or it would measure less than it says). */
async function checkApplied(p: Filled, path: string): Promise<void> {
  if (!path.includes('search=')) return;
  const res = await fetch(`${bench.stack.apiUrl}${apiPath(path)}`, { headers: keysOf(p) });
  const answer = (await res.json()) as { search?: { unknown: unknown[] } };
  if (res.status !== 200 || answer.search!.unknown.length > 0) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(answer).slice(0, 300)}`);
}

/** What `read-client.ts` answers. */
interface Measured {
  figures: { name: string; p50: number; p99: number; samples: { at: number; ms: number }[] }[];
  cpu_ms: number;
  collections: string[];
}

/** Runs `read-client.ts` (the load generator, a process holding only the reads) with `job`; its answer. */
function readClient(job: object): Promise<Measured> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./read-client.ts', import.meta.url))], { stdio: ['pipe', 'pipe', 'inherit'] });
  const out: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stdin.end(JSON.stringify(job));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(Buffer.concat(out).toString('utf8')) as Measured) : reject(new Error(`read-client exited with ${code}`))));
  });
}

/**
 * Every read of one project: p50 and p99 (ms) of `REQUESTS` GETs each, one at a time (after a tenth as warm-up),
 * and what the host did meanwhile. The reads use at most a core or so of the two; CPU the hypervisor gave to other
 * machines (steal) lengthens every latency, whatever Lookout does.
 */
async function measureAll(p: Filled) {
  const named = reads(p);
  for (const [, pathOf] of named) if (!pathOf(0).startsWith('/api/0/')) await checkApplied(p, pathOf(0));
  const job = {
    base: bench.stack.apiUrl,
    headers: keysOf(p),
    requests: REQUESTS,
    reads: named.map(([name, pathOf]) => ({ name, paths: Array.from({ length: REQUESTS }, (_, i) => apiPath(pathOf(i))) })),
  };
  const started = performance.now();
  let client = 0;
  const use = hostUse(bench.stack, () => ({ 'load generator': client }));
  const measured = await readClient(job);
  client = round(measured.cpu_ms / ((performance.now() - started) / 1000) / 10, 0);
  const host = use();
  for (const f of measured.figures) traced.push(...f.samples.map((s) => `${p.name},"${f.name}",${s.at},${round(s.ms, 2)}`));
  collections.push(...measured.collections);
  return { figures: measured.figures.map(({ name, p50, p99 }) => ({ name, p50, p99 })), host };
}

const search = (text: string) => `/issues?search=${encodeURIComponent(text)}`;

/** The reads of the issue (`docs/performance.md`), each a path by request number. */
function reads(p: Filled): [string, (i: number) => string][] {
  // issues with a 50th page of events (with smaller sizes given on the command line: the largest one)
  const { top, deep, many, topEvents: sample } = p;
  return [
    ['baseline: GET /healthz (the API process, no store)', () => '/healthz'],
    ['list: default (unresolved, last seen, 100)', () => '/issues'],
    ['list: order=first_seen', () => '/issues?order=first_seen'],
    ['list: order=event_count', () => '/issues?order=event_count'],
    ['list: order=id', () => '/issues?order=id'],
    ['list: release=', (i) => `/issues?release=${encodeURIComponent(`shop@1.${i % RELEASES}`)}`],
    ['list: environment=', (i) => `/issues?environment=${ENVIRONMENTS[i % 3]}`],
    ['list: level=warning', () => '/issues?level=warning'],
    ['list: company=', (i) => `/issues?company=company-${i % COMPANIES}`],
    ['list: query= (a word of titles)', (i) => `/issues?query=${word(i)}`],
    ['list: release + environment + query', (i) => `/issues?release=${encodeURIComponent(`shop@1.${i % RELEASES}`)}&environment=production&query=${word(i)}`],
    // the search's terms (issue 50)
    ['search: release: environment: (the same events)', (i) => search(`release:shop@1.${i % RELEASES} environment:${ENVIRONMENTS[i % 3]}`)],
    ['search: first-release:', (i) => search(`first-release:shop@1.${i % RELEASES}`)],
    ['search: user.email:', (i) => search(`user.email:user${(i * 97) % p.users}@example.com`)],
    ['search: browser.name: (a tag)', (i) => search(`browser.name:${['Chrome', 'Firefox', 'Mobile Safari'][i % 3]}`)],
    ['search: has:user level:error', () => search('has:user level:error')],
    ['search: !release: (negated)', (i) => search(`!release:shop@1.${i % RELEASES}`)],
    ['search: is:unassigned', () => search('is:unassigned')],
    ['search: age:-24h', () => search('age:-24h')],
    ['search: last-seen:-1h, by last seen', () => search('last-seen:-1h')],
    ['search: times-seen:>100, by events', () => `${search('times-seen:>100')}&order=event_count`],
    ['search: times-seen:>10 age:-7d environment:', (i) => search(`times-seen:>10 age:-7d environment:${ENVIRONMENTS[i % 3]}`)],
    ['issue page', (i) => `/issues/${many[i % many.length]}`],
    ['its events, page 1 (25)', (i) => `/issues/${deep[i % deep.length]}/events`],
    ['its events, page 50 (25)', (i) => `/issues/${deep[i % deep.length]}/events?offset=1225`],
    ['one event by id', (i) => `/issues/${top}/events/${sample[i % sample.length]}`],
    // Sentry's web API, as sentry-cli and the MCP server read it (issue 70)
    ['sentry: issues list (sentry-cli issues list)', () => `/api/0/projects/${p.orgSlug}/${p.slug}/issues/`],
    ['sentry: issues ?query= (MCP search_issues)', (i) => `/api/0/organizations/${p.orgSlug}/issues/?limit=10&sort=date&statsPeriod=14d&project=${p.project}&query=${encodeURIComponent(`is:unresolved release:shop@1.${i % RELEASES}`)}`],
    ['sentry: issue by short id', (i) => `/api/0/organizations/${p.orgSlug}/issues/${shortIdOf(p.slug, many[i % many.length]!)}/`],
    ['sentry: its latest event', (i) => `/api/0/organizations/${p.orgSlug}/issues/${many[i % many.length]}/events/latest/`],
    ['sentry: project events (sentry-cli events list)', () => `/api/0/projects/${p.orgSlug}/${p.slug}/events/`],
    ['sentry: releases (sentry-cli releases list)', () => `/api/0/projects/${p.orgSlug}/${p.slug}/releases/`],
  ];
}

/** When tracing: Redis keeps every command slower than 5 ms of the reads in its slow log, kept beside the requests. */
async function traceRedis<T>(measuring: () => Promise<T>): Promise<T> {
  const redis = runtime.issuesState.redis;
  if (!TRACE) return measuring();
  await redis.config('SET', 'slowlog-log-slower-than', '5000');
  await redis.config('SET', 'slowlog-max-len', '10000');
  await redis.slowlog('RESET');
  const result = await measuring();
  const entries = (await redis.slowlog('GET', -1)) as [number, number, number, string[]][];
  slow.push(...entries.reverse().map(([, at, micros, args]) => `${at},${micros},"${args.slice(0, 3).join(' ').replaceAll('"', "'")}"`));
  return result;
}

try {
  const hostWork = hostWorkMs();
  log(`filling the small project: ${SMALL.issues} issues, ${SMALL.events} events`);
  const small = await fill('small', SMALL, 0);
  const { figures: smallFigures, host: smallHost } = await traceRedis(() => measureAll(small));
  log(`filling the large project: ${LARGE.issues} issues, ${LARGE.events} events`);
  const large = await fill('large', LARGE, 100_000);
  const { figures: largeFigures, host: largeHost } = await traceRedis(() => measureAll(large));
  if (TRACE) {
    fs.writeFileSync(TRACE, traced.join('\n') + '\n');
    fs.writeFileSync(`${TRACE}.redis.csv`, slow.join('\n') + '\n');
    fs.writeFileSync(`${TRACE}.gc.csv`, collections.join('\n') + '\n');
  }

  const rows = smallFigures.map((s, i) => {
    const l = largeFigures[i]!;
    return { read: s.name, small: { p50: s.p50, p99: s.p99 }, large: { p50: l.p50, p99: l.p99 }, p99_ratio: round(l.p99 / s.p99, 2), met: l.p99 < 50 && l.p99 <= 1.5 * s.p99 };
  });
  report(
    'bench:reads',
    { small: SMALL, large: LARGE, requests: REQUESTS, host_work_ms: hostWork, host: { small: smallHost, large: largeHost }, reads: rows, every_target_met: rows.every((r) => r.met) },
    [
      ['host', `work baseline ${hostWork} ms; while measuring: small ${hostUseWords(smallHost)}, large ${hostUseWords(largeHost)}`],
      [`read (ms; small ${SMALL.issues} issues / ${SMALL.events} events → large ${LARGE.issues} / ${LARGE.events})`, 'small p50 / p99 → large p50 / p99 (ratio of p99s)'],
      ...rows.map((r): [string, string] => [r.read, `${r.small.p50} / ${r.small.p99} → ${r.large.p50} / ${r.large.p99} (×${r.p99_ratio})${r.met ? '' : '  MISSED: p99 < 50 ms and ≤ 1.5× small'}`]),
    ],
  );
} finally {
  await bench.close();
}
