/**
 * The traces and logs pipeline's entry (issue 69): an envelope's `transaction`, `span`, `log` and `otel_log` items
 * are read (src/domain/transactions.ts, src/domain/logs.ts: a bad item is dropped with its reason, the envelope's
 * other items kept), scrubbed like error events, counted per transaction, span and log line, and stored durably
 * with what arrived together; the group's `traces.process` job is added on the side and the worker counts it into
 * the aggregates, keeps its samples and its log lines (workers/digest/traces.ts).
 */
import type { Logger } from '../log.ts';
import { readLogContainer, readOtelLog, LogItemError, type LogRecord } from '../domain/logs.ts';
import { readSpanItem, readTransaction, TraceItemError, type TransactionRecord } from '../domain/transactions.ts';
import { scrubEvent } from '../domain/scrub.ts';
import { BadRequestError } from '../errors.ts';
import { makeJobGather } from '../queues/gather.ts';
import { tracesJobId } from '../queues/jobs/traces.job.ts';
import type { Queues } from '../queues/registry.ts';
import { makeSweep } from '../queues/sweep.ts';
import type { IngestStats } from '../state/ingest-stats.ts';
import { packJson } from '../store/packing.ts';
import { type JobTraces, type Received, type TracesStore } from '../store/traces.store.ts';
import type { ProjectDoc } from '../store/projects.store.ts';
import { makeGroupCommit, type GroupWrites } from '../util/group-commit.ts';
import type { QuotaService } from './quota.service.ts';

/** Most records stored in one group, and gathered in one job (a log container weighs its lines / 25). */
const GROUP_MAX = 500;
/** How long stored groups are gathered into one job (ms). */
const GATHER_MS = 250;

/** An item of the kinds this pipeline takes, as the envelope gave it. */
export interface TraceItem {
  type: 'transaction' | 'span' | 'log' | 'otel_log';
  payload: unknown;
  header: Record<string, unknown>;
}

/** Outcome categories, as Sentry's rate limits and client reports name them (and quotas count them). */
export const CATEGORY = { transaction: 'transaction', span: 'span', log: 'log_item', otel_log: 'log_item' } as const;
type TraceCategory = (typeof CATEGORY)[keyof typeof CATEGORY];
export const isTraceType = (type: string): type is TraceItem['type'] => Object.hasOwn(CATEGORY, type);

/** A domain reading error as the 400 an envelope item is dropped with. */
function dropped(err: unknown): never {
  if (err instanceof TraceItemError || err instanceof LogItemError) throw new BadRequestError(err.reason, err.message);
  throw err;
}

/**
 * A transaction scrubbed: descriptions and URLs may carry what the error scrubber filters (a card number in a
 * query, a token in a URL), so they go through it as an event's text does.
 */
function scrubbed(tx: TransactionRecord): TransactionRecord {
  return scrubEvent(tx).value as TransactionRecord;
}

/** Log lines scrubbed (attributes' secret keys and card numbers were taken out when read). */
const lineCount = (r: Received) => (r.kind === 'logs' ? r.lines.length : 1);

export function makeTracesService(deps: { store: TracesStore; queues: Queues; stats: IngestStats; quota: QuotaService; log: Logger; writes: GroupWrites }) {
  const { store, queues, stats, log } = deps;
  const jobs = makeJobGather<JobTraces>((groups) => queues.enqueue('traces.process', { groups }, tracesJobId(groups[0]!.id)), {
    maxWeight: GROUP_MAX,
    weight: (g) => g.items?.reduce((n, r) => n + Math.ceil(lineCount(r) / 25), 0) ?? 1,
    log,
    // a job's writes are a few commits of the store's one writer whatever it holds: at 500 transactions a second,
    // gathering a quarter of a second makes each job some hundred transactions, and the counts still show in time
    gatherMs: GATHER_MS,
  });
  const group = makeGroupCommit<Received>(
    async (items) => {
      // stored: the callers are answered now, the job added on the side
      jobs.add(await store.insertGroup(items));
    },
    { maxItems: GROUP_MAX, ...deps.writes, weight: (r) => Math.ceil(lineCount(r) / 25) },
  );

  /** Reads one item into what is stored, counting what it holds and what it left out. */
  function read(project: number, item: TraceItem, traceHeader: unknown, now: Date): { received: Received[]; counts: [TraceCategory, number][] } {
    try {
      switch (item.type) {
        case 'transaction': {
          const tx = scrubbed(readTransaction(item.payload, { now, eventId: item.header.event_id, traceHeader }));
          return { received: [{ project, kind: 'transaction', tx }], counts: [['transaction', 1], ['span', tx.spans.length + 1]] };
        }
        case 'span': {
          const spans = readSpanItem(item.payload, { now, traceHeader });
          const received: Received[] = [];
          for (const s of spans) {
            if (s.kind === 'vital') received.push({ project, kind: 'vitals', page: { environment: s.environment, release: s.release, name: s.page, op: 'pageload', method: null }, at: s.at, vitals: s.vitals });
            if (s.kind === 'transaction') received.push({ project, kind: 'transaction', tx: scrubbed(s.transaction) });
          }
          return { received, counts: [['span', spans.reduce((n, s) => n + (s.kind === 'transaction' ? s.transaction.spans.length + 1 : 1), 0)]] };
        }
        case 'log':
        case 'otel_log': {
          const { lines, skipped } = item.type === 'log' ? readLogContainer(item.payload, item.header.item_count) : oneLine(readOtelLog(item.payload));
          if (skipped) stats.record(project, 'dropped', 'log_item', 'invalid', skipped, now);
          const attrs = lines[0]?.attrs ?? {};
          const text = (v: unknown) => (typeof v === 'string' ? v : null);
          const received: Received[] = lines.length ? [{ project, kind: 'logs', lines, environment: text(attrs['sentry.environment']), release: text(attrs['sentry.release']) }] : [];
          return { received, counts: [['log_item', lines.length]] };
        }
      }
    } catch (err) {
      return dropped(err);
    }
  }

  return {
    /**
     * Reads and stores one envelope item of a trace kind. Answers `stored` or `gone` (the sender left before it
     * was written); an item that cannot be used is a 400 naming its reason (the caller drops and counts it).
     */
    async accept(project: ProjectDoc, item: TraceItem, opts: { now: Date; traceHeader?: unknown; gone?: () => boolean }): Promise<'stored' | 'gone'> {
      const { received, counts } = read(project._id, item, opts.traceHeader, opts.now);
      // the project's quotas of each category: an item over one is refused whole (429, X-Sentry-Rate-Limits by category)
      const taken = counts.filter(([, n]) => n > 0);
      for (const [category] of taken) deps.quota.refuseIfOver(project, { category, type: category, now: opts.now });
      for (const [category, n] of taken) deps.quota.take(project, { category, type: category, now: opts.now }, n);
      const results = await Promise.all(received.map((r) => group.add(r, opts.gone)));
      const outcome = results.includes('gone') ? 'dropped' : 'accepted';
      for (const [category, n] of counts) if (n > 0) stats.record(project._id, outcome, category, outcome === 'dropped' ? 'client_gone' : '', n, opts.now);
      return outcome === 'dropped' ? 'gone' : 'stored';
    },

    /** What taking `item` costs the thread, nothing written: read, scrubbed, packed (src/services/warm-up.ts). */
    rehearse(item: TraceItem, traceHeader: unknown, now: Date): void {
      packJson(read(0, item, traceHeader, now).received, 'fast');
    },

    /** Items waiting for the next write, and the age of the oldest (admission reads it). */
    waiting: () => group.waiting(),

    /** Enqueues stored groups whose job was never added or was lost (src/queues/sweep.ts). */
    sweep: makeSweep(queues, {
      job: 'traces.process',
      unprocessed: (olderThan, limit) => store.backlog.olderThan(olderThan, limit),
      jobId: tracesJobId,
      payload: (ids) => ({ groups: ids.map((id) => ({ id })) }),
      perJob: 20,
    }),

    /** Waits for writes and enqueues in flight (graceful shutdown). */
    async drain(): Promise<void> {
      await group.drain();
      await Promise.all([jobs.drain(), store.backlog.release()]);
    },
  };
}
export type TracesService = ReturnType<typeof makeTracesService>;

/** An `otel_log` item's one line; one without a time or a body is dropped whole. */
function oneLine(line: LogRecord | null): { lines: LogRecord[]; skipped: number } {
  if (!line) throw new LogItemError('invalid', 'an otel_log record needs time_unix_nano and a body');
  return { lines: [line], skipped: 0 };
}
