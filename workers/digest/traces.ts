/**
 * The `traces.process` job: transactions, page vitals and log lines received together, kept as issue 69 says.
 *
 * 1. gather: the groups' records (a swept job reads its groups back), of the groups still waiting in `trace_raw`;
 * 2. per project, decide in one script call which transaction names have a group of their own (a project keeps
 *    NAMES_MAX; later names count under OVERFLOW_NAME) and which transactions are kept whole: every failed one, a
 *    random share, and the slowest of each group in the hour, within the project's bytes a day;
 * 3. count: each group's records into a part per project and minute (`<project>:<minute>:<group>`), written once
 *    per `_id` (a retried job's write is refused, not counted twice); the rollup merges parts into minutes once the
 *    group has left `trace_raw` (src/services/perf-rollup.service.ts);
 * 4. keep: the samples (listed under their trace), the names of new groups and span groups, and the log lines packed
 *    per project and minute (each chunk numbered in its minute: src/state/traces.state.ts);
 * 5. the groups go from `trace_raw` and the backlog.
 */
import { groupKeyOf, groupPartsOf, addTransaction, addVitalsOnly, OVERFLOW_NAME, NAMES_MAX, type Bucket, type GroupParts, type SpanParts } from '../../src/domain/perf-buckets.ts';
import type { LogRecord } from '../../src/domain/logs.ts';
import type { TransactionRecord } from '../../src/domain/transactions.ts';
import type { TracesProcessPayload } from '../../src/queues/jobs/traces.job.ts';
import type { TracesState } from '../../src/state/traces.state.ts';
import { packJson } from '../../src/store/packing.ts';
import { MINUTE_MS, timeKey, type BucketDoc, type JobTraces, type LogChunkDoc, type Received, type SampleDoc, type TracesStore } from '../../src/store/traces.store.ts';
import type { Config } from '../../config/index.ts';
import { groupBy } from '../../src/util/group-by.ts';

export interface TracesProcessDeps {
  stores: { traces: TracesStore };
  tracesState: TracesState;
  config: Pick<Config, 'traces'>;
}

/** How far from its receipt a log line's own time is believed; outside it the line is filed at its receipt. */
const LOG_SKEW_MS = { past: 86_400_000, future: 5 * MINUTE_MS };

export async function processTraceGroups(payload: TracesProcessPayload, deps: TracesProcessDeps, now: Date): Promise<{ records: number }> {
  const store = deps.stores.traces;
  // 1. gather: only groups still in trace_raw; one that left was applied by an earlier delivery of this job (its
  // parts may be merged and gone already: writing them again would count them twice)
  const waiting = new Set(await store.ofGroupIds(payload.groups.map((g) => g.id)));
  const swept = payload.groups.filter((g) => waiting.has(g.id) && (!('items' in g) || !g.items)).map((g) => g.id);
  const read = new Map((swept.length ? await store.ofGroups(swept) : []).map((g) => [g.id, g]));
  let records = 0;
  const out: Written = { parts: [], samples: [], logs: [] };
  for (const g of payload.groups) {
    if (!waiting.has(g.id)) continue;
    const group: JobTraces | undefined = 'items' in g && g.items ? g : read.get(g.id);
    if (!group?.items) continue; // a marker whose group was never written: its caller was not answered
    const byProject = new Map<number, Received[]>();
    for (const r of group.items) (byProject.get(r.project) ?? byProject.set(r.project, []).get(r.project)!).push(r);
    for (const [project, items] of byProject) await applyProject(deps, project, group, items, now, out);
    records += group.items.length;
  }
  // 4. kept, the job's documents of each kind in one write; samples listed under their trace once stored
  await store.writeSamples(out.samples);
  for (const [project, samples] of groupBy(out.samples, (d) => d.project_id)) {
    await deps.tracesState.indexSamples(project, samples.map((d) => ({ trace: d.trace_id, span: d._id.slice(d._id.lastIndexOf(':') + 1) })), now.getTime());
  }
  await store.writeLogChunks(out.logs);
  await store.writeParts(out.parts);
  // 5. applied: the groups go
  await store.forgetGroups(payload.groups.map((g) => g.id));
  return { records };
}

/** What a job writes, gathered over its groups and projects. */
interface Written {
  parts: BucketDoc[];
  samples: SampleDoc[];
  logs: LogChunkDoc[];
}

/** The name under which a transaction's group is admitted (its environment and release do not count). */
const nameKey = (g: Pick<GroupParts, 'name' | 'op' | 'method'>) => groupKeyOf({ environment: '', release: null, name: g.name, op: g.op, method: g.method });

async function applyProject(deps: TracesProcessDeps, project: number, group: JobTraces, items: Received[], now: Date, out: Written): Promise<void> {
  const store = deps.stores.traces;
  const { traces: limits } = deps.config;
  const txs = items.filter((r): r is Extract<Received, { kind: 'transaction' }> => r.kind === 'transaction').map((r) => r.tx);
  const vitals = items.filter((r): r is Extract<Received, { kind: 'vitals' }> => r.kind === 'vitals');
  // 2. names admitted, samples chosen
  const parts = new Map<string, GroupParts>();
  for (const p of [...txs.map(groupPartsOf), ...vitals.map((v) => v.page)]) parts.set(nameKey(p), p);
  // the budget weighs a transaction by its JSON (a quarter of it is about what it packs to); only samples are packed
  const estimate = (tx: TransactionRecord) => Math.ceil((400 + tx.spans.length * 160 + tx.name.length) / 4);
  const { admitted, decisions } = await deps.tracesState.decide(
    project,
    now,
    [...parts.keys()],
    txs.map((tx) => ({ group: nameKey(tx), duration: tx.end - tx.start, bytes: estimate(tx), must: tx.failed || Math.random() < limits.sampleShare })),
    { slowestPerHour: limits.slowestPerHour, bytesPerDay: limits.sampleBytesPerDay, maxNames: NAMES_MAX },
  );
  const groupOf = (p: GroupParts): [string, GroupParts] => {
    const kept = admitted.has(nameKey(p)) ? p : { ...p, name: OVERFLOW_NAME, op: 'default', method: null };
    return [groupKeyOf(kept), kept];
  };
  // 3. counted per minute
  const minutes = new Map<number, Bucket>();
  const bucketAt = (ms: number) => {
    const minute = Math.floor(ms / MINUTE_MS) * MINUTE_MS;
    return minutes.get(minute) ?? minutes.set(minute, {}).get(minute)!;
  };
  const groups = new Map<string, GroupParts>();
  const spans = new Map<string, SpanParts>();
  const samples: SampleDoc[] = [];
  txs.forEach((tx, i) => {
    const [key, parts] = groupOf(groupPartsOf(tx));
    groups.set(key, parts);
    for (const [sk, s] of addTransaction(bucketAt(tx.end), key, tx)) spans.set(sk, s);
    if (decisions[i] === 'sample') samples.push(sampleDoc(project, key, tx, packJson(tx, 'small'), now));
  });
  for (const v of vitals) {
    const [key, parts] = groupOf(v.page);
    groups.set(key, parts);
    addVitalsOnly(bucketAt(v.at), key, v.vitals);
  }
  // 4. kept: names now (a part never names a group whose parts are not stored); the rest by the caller, once a job
  await store.saveNames(project, groups, spans);
  out.parts.push(...[...minutes].map(([minute, b]) => ({ _id: `${timeKey(project, minute)}:${group.id}`, b })));
  out.samples.push(...samples);
  // log chunks are numbered in their minute (the trace page and the Logs page read them by id)
  const chunks = logChunks(project, group, items);
  const numbers = await deps.tracesState.number('tl', project, chunks.map((c) => ({ minute: c.minute, group: group.id })), now.getTime());
  out.logs.push(...chunks.map(({ minute, doc }, i) => ({ _id: `${timeKey(project, minute)}:${numbers[i]}`, ...doc })));
}

function sampleDoc(project: number, group: string, tx: TransactionRecord, data: SampleDoc['data'], now: Date): SampleDoc {
  return {
    _id: `${project}:${tx.trace_id}:${tx.span_id}`,
    project_id: project,
    trace_id: tx.trace_id,
    group,
    name: tx.name,
    at: new Date(tx.end),
    duration: tx.end - tx.start,
    failed: tx.failed,
    received_at: now,
    data,
  };
}

/** The group's log lines of one project, one chunk per minute they were written in, oldest line first. */
function logChunks(project: number, group: JobTraces, items: Received[]): { minute: number; doc: Omit<LogChunkDoc, '_id'> }[] {
  const received = Date.parse(group.received_at);
  const byMinute = new Map<number, LogRecord[]>();
  for (const item of items) {
    if (item.kind !== 'logs') continue;
    for (const line of item.lines) {
      const t = line.t < received - LOG_SKEW_MS.past || line.t > received + LOG_SKEW_MS.future ? received : line.t;
      const minute = Math.floor(t / MINUTE_MS) * MINUTE_MS;
      (byMinute.get(minute) ?? byMinute.set(minute, []).get(minute)!).push({ ...line, t });
    }
  }
  return [...byMinute].map(([minute, lines]) => {
    lines.sort((a, b) => a.t - b.t);
    const traces = [...new Set(lines.map((l) => l.trace_id?.slice(0, 8)).filter((t): t is string => !!t))];
    return {
      minute,
      doc: { project_id: project, n: lines.length, traces: traces.join(','), from: new Date(lines[0]!.t), to: new Date(lines.at(-1)!.t), data: packJson(lines, 'small') },
    };
  });
}
