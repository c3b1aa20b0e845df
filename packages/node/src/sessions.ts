/**
 * Release-health sessions, kept the way Sentry's SDKs keep them: each
 * session's worst status (ok < errored < abnormal < crashed) and its error
 * count. In `sessions` mode every change is sent, in batches of up to 100;
 * in `aggregate` mode (a server handling many short sessions) ended sessions
 * are counted per minute and user and sent as aggregates (spec 4.4 form 3).
 */
import crypto from 'node:crypto';

export type SessionStatus = 'ok' | 'errored' | 'abnormal' | 'crashed';
const SEVERITY: Record<SessionStatus, number> = { ok: 0, errored: 1, abnormal: 2, crashed: 3 };
const BATCH = 100;

export interface Session {
  readonly sid: string;
  readonly status: SessionStatus;
  /** a handled error: the session counts as errored */
  error(): void;
  /** an unhandled error: the session counts as crashed */
  crash(): void;
  end(): void;
}

interface Entry {
  sid: string;
  did?: string;
  status: SessionStatus;
  errors: number;
  started: string;
  ended: boolean;
}

export function makeSessions(opts: {
  mode: 'sessions' | 'aggregate';
  release?: string;
  environment?: string;
  /** sends one request body to POST /api/v1/sessions */
  send(body: unknown): void;
}) {
  const changed = new Map<string, Entry>();
  const open = new Set<Entry>();
  /** aggregate mode: minute|did → counts */
  const buckets = new Map<string, { started: string; did?: string; exited: number; errored: number; abnormal: number; crashed: number }>();

  function count(entry: Entry): void {
    const minute = `${entry.started.slice(0, 16)}:00.000Z`;
    const key = `${minute}|${entry.did ?? ''}`;
    const bucket = buckets.get(key) ?? { started: minute, ...(entry.did ? { did: entry.did } : {}), exited: 0, errored: 0, abnormal: 0, crashed: 0 };
    bucket[entry.status === 'ok' ? 'exited' : entry.status]++;
    buckets.set(key, bucket);
  }

  function touch(entry: Entry): void {
    if (opts.mode === 'sessions') changed.set(entry.sid, entry);
    else if (entry.ended) count(entry);
  }

  function worsen(entry: Entry, status: SessionStatus): void {
    if (entry.ended) return;
    if (SEVERITY[status] > SEVERITY[entry.status]) entry.status = status;
    touch(entry);
  }

  return {
    start(startOpts: { did?: string } = {}): Session {
      const entry: Entry = { sid: crypto.randomUUID(), did: startOpts.did, status: 'ok', errors: 0, started: new Date().toISOString(), ended: false };
      open.add(entry);
      touch(entry);
      return {
        sid: entry.sid,
        get status() {
          return entry.status;
        },
        error() {
          if (!entry.ended) entry.errors++;
          worsen(entry, 'errored');
        },
        crash: () => worsen(entry, 'crashed'),
        end() {
          if (entry.ended) return;
          entry.ended = true;
          open.delete(entry);
          touch(entry);
        },
      };
    },

    /** Sends what changed: sessions in batches of 100, or the counted aggregates. */
    flush(): void {
      if (!opts.release) {
        changed.clear();
        buckets.clear();
        return; // spec 4.4: no release, no session
      }
      const common = { release: opts.release, ...(opts.environment ? { environment: opts.environment } : {}) };
      if (opts.mode === 'sessions') {
        const entries = [...changed.values()].map((e) => ({
          sid: e.sid,
          ...common,
          status: e.ended && e.status === 'ok' ? 'exited' : e.status,
          errors: e.errors,
          started: e.started,
          ...(e.did ? { did: e.did } : {}),
        }));
        changed.clear();
        for (let i = 0; i < entries.length; i += BATCH) opts.send({ sessions: entries.slice(i, i + BATCH) });
      } else {
        const items = [...buckets.values()];
        buckets.clear();
        for (let i = 0; i < items.length; i += BATCH) opts.send({ ...common, aggregates: items.slice(i, i + BATCH) });
      }
    },

    /** Ends every open session (closing the client). */
    endAll(): void {
      for (const entry of [...open]) {
        entry.ended = true;
        open.delete(entry);
        touch(entry);
      }
    },
  };
}
