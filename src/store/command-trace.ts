/**
 * The store's command trace (`STORE_TRACE_DIR`), a diagnostic: each command a
 * process sends to MongoDB, when it ended and how long it took, one line each
 * in `<dir>/store-commands-<pid>.tsv`. Lined up with a benchmark's per-request
 * trace it says what the store was doing in a slow second (docs/tuning.md).
 *
 * A filter is written as its shape only: its fields and operators, every
 * value as 1 (a filter may hold a key's hash).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { MongoClient } from 'mongodb';

/** Commands that only keep the connection up: not traced. */
const HOUSEKEEPING = new Set(['hello', 'isMaster', 'ismaster', 'ping', 'buildInfo', 'endSessions', 'saslStart', 'saslContinue']);

export const TRACE_HEADER = 'ended_at_ms\tduration_ms\tcommand\tcollection\tfilter\tdocs\n';

/** A filter's fields and operators, with every value replaced by 1 (arrays by one element's shape). */
export function filterShape(filter: unknown): unknown {
  if (Array.isArray(filter)) return filter.length > 0 && typeof filter[0] === 'object' ? [filterShape(filter[0])] : 1;
  if (filter === null || typeof filter !== 'object' || filter instanceof Date) return 1;
  return Object.fromEntries(Object.entries(filter).map(([key, value]) => [key, filterShape(value)]));
}

/** The filter a command carries: a query's, or the first statement's of a write; null for none (an insert). */
function filterOf(command: Record<string, unknown>): unknown {
  const first = (list: unknown) => (Array.isArray(list) ? (list[0] as Record<string, unknown> | undefined) : undefined);
  return command.filter ?? command.query ?? first(command.deletes)?.q ?? first(command.updates)?.q ?? null;
}

/** How many documents the reply counts: a batch's, or the documents a write matched or wrote. */
function docsOf(reply: Record<string, unknown> | undefined): number | '' {
  const cursor = reply?.cursor as { firstBatch?: unknown[]; nextBatch?: unknown[] } | undefined;
  const n = cursor?.firstBatch?.length ?? cursor?.nextBatch?.length ?? reply?.n;
  return typeof n === 'number' ? n : '';
}

/** Traces the client's commands to `<dir>/store-commands-<pid>.tsv` (the client must be made with `monitorCommands`). */
export function traceCommands(client: MongoClient, dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `store-commands-${process.pid}.tsv`);
  const fresh = !fs.existsSync(file);
  const out = fs.createWriteStream(file, { flags: 'a' });
  if (fresh) out.write(TRACE_HEADER);
  const started = new Map<number, { at: number; command: string; collection: string; filter: string }>();
  client.on('commandStarted', (e) => {
    if (HOUSEKEEPING.has(e.commandName)) return;
    const command = e.command as Record<string, unknown>;
    const target = e.commandName === 'getMore' ? command.collection : command[e.commandName];
    const filter = filterOf(command);
    started.set(e.requestId, {
      at: performance.now(),
      command: e.commandName,
      collection: typeof target === 'string' ? target : '',
      filter: filter === null ? '' : JSON.stringify(filterShape(filter)),
    });
  });
  const ended = (e: { requestId: number; reply?: unknown }) => {
    const s = started.get(e.requestId);
    if (!s) return;
    started.delete(e.requestId);
    const ms = (performance.now() - s.at).toFixed(2);
    out.write(`${Date.now()}\t${ms}\t${s.command}\t${s.collection}\t${s.filter}\t${docsOf(e.reply as Record<string, unknown> | undefined)}\n`);
  };
  client.on('commandSucceeded', ended);
  client.on('commandFailed', ended);
}
