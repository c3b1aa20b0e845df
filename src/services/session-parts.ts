/**
 * Session parts (issue 25): the worker copies the raw batches it applies into
 * parts of some PART_JSON_CHARS of entries, from the batches it already holds
 * (the API's job carries each one), and lists their ids; a minute later the
 * repacker deletes the batches' own documents (src/services/repack.service.ts).
 * The API stores each batch in a document of its own, to answer at once, and
 * such a 4 KB row fills most of an 8 KB SQLite page: parts fill their pages
 * whole, about half the bytes a session. Nothing reads a batch back to write
 * its part (a repacker that did slowed ingestion for the seconds it read:
 * docs/performance.md).
 *
 * A part is a copy, written before any document it replaces is deleted, so a
 * worker that dies holding batches loses nothing: their documents stay. So do
 * those of batches held alone when the part is due (a part of one batch would
 * only copy it), and of batches still on the backlog when the repacker comes.
 */
import type { Logger } from '../log.ts';
import type { RepackList } from '../state/repack-list.ts';
import { PART_JSON_CHARS, type SessionBatchDoc, type SessionsStore } from '../store/sessions.store.ts';

/** How long the first batch a worker holds waits for a part to fill: the repacker deletes a minute's documents a minute after it. */
const PART_WAIT_MS = 30_000;

export function makePartWriter(deps: { store: Pick<SessionsStore, 'insertPart'>; list: RepackList; log: Logger; partChars?: number; waitMs?: number }) {
  const { partChars = PART_JSON_CHARS, waitMs = PART_WAIT_MS } = deps;
  let held = new Map<string, SessionBatchDoc>();
  let chars = 0;
  let timer: NodeJS.Timeout | null = null;
  const writing = new Set<Promise<void>>();

  async function write(batches: SessionBatchDoc[]): Promise<void> {
    if (batches.length < 2) return;
    try {
      await deps.store.insertPart(batches);
      await deps.list.add(...batches.map((b) => b._id));
    } catch (err) {
      deps.log.warn({ err: (err as Error).message, batches: batches.length }, 'could not write a part of session batches; they keep their documents');
    }
  }

  /** Writes what is held as a part. */
  function flush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = null;
    const batches = [...held.values()];
    held = new Map();
    chars = 0;
    const written = write(batches).finally(() => writing.delete(written));
    writing.add(written);
    return written;
  }

  return {
    /** Holds an applied batch for the next part; writes the part once it is full. */
    async add(batch: SessionBatchDoc): Promise<void> {
      if (held.has(batch._id)) return; // a job retried
      held.set(batch._id, batch);
      for (const r of batch.requests) chars += r.entries.length;
      if (chars >= partChars) await flush();
      else timer ??= setTimeout(() => void flush(), waitMs).unref();
    },
    /** Writes what is held and waits for every part being written (the worker stopping, tests). */
    async drain(): Promise<void> {
      void flush();
      await Promise.all([...writing]);
    },
  };
}

export type PartWriter = ReturnType<typeof makePartWriter>;
