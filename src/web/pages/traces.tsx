/**
 * A trace's page and the Logs page (issue 69). The trace page joins every sampled transaction of one trace, the
 * error events and the log lines that named it, in one waterfall: spans as bars on the trace's time line, errors and
 * lines pinned under the span they happened in. The Logs page searches a window's lines by level, text and attribute,
 * and can follow new ones live.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.ts';
import { count, when } from '../format.ts';
import { navigate } from '../router.ts';
import type { LogList, Trace } from '../types.ts';
import { Show, Title, useLoad } from '../ui.tsx';
import { ms } from './performance.tsx';
import { ProjectNav } from './projects.tsx';

type Line = LogList['lines'][number];
type Tx = Trace['transactions'][number];
type TraceError = Trace['errors'][number];

interface Row {
  id: string;
  depth: number;
  label: string;
  op: string;
  start: number;
  end: number;
  failed: boolean;
  orphan?: boolean;
  errors: TraceError[];
  lines: Line[];
}

/** The waterfall's rows: each transaction under the span that called it (or on its own: an orphan), its spans under theirs. */
function rowsOf(trace: Trace): Row[] {
  /** `list` grouped by a key (items without one left out). */
  const bySpan = <T,>(list: T[], key: (item: T) => string | null) => {
    const out = new Map<string, T[]>();
    for (const item of list) {
      const k = key(item);
      if (k) (out.get(k) ?? out.set(k, []).get(k)!).push(item);
    }
    return out;
  };
  const errorsBySpan = bySpan(trace.errors, (e) => e.span_id);
  const linesBySpan = bySpan(trace.logs, (l) => l.span_id);
  const all: Row[] = [];
  const spanIds = new Set(trace.transactions.flatMap((t) => [t.span_id, ...t.spans.map((s) => s.span_id)]));
  const kids = new Map<string, (Tx | Tx['spans'][number])[]>();
  const push = (parent: string, item: Tx | Tx['spans'][number]) => (kids.get(parent) ?? kids.set(parent, []).get(parent)!).push(item);
  for (const t of trace.transactions) {
    if (t.parent_span_id && spanIds.has(t.parent_span_id)) push(t.parent_span_id, t);
    for (const s of t.spans) push(s.parent_span_id && spanIds.has(s.parent_span_id) ? s.parent_span_id : t.span_id, s);
  }
  const visit = (item: Tx | Tx['spans'][number], depth: number) => {
    const isTx = 'name' in item;
    all.push({
      id: item.span_id,
      depth,
      label: isTx ? item.name : (item.description ?? ''),
      op: item.op,
      start: item.start,
      end: item.end,
      failed: isTx ? item.failed : item.status !== null && !['ok', 'cancelled', 'unknown'].includes(item.status),
      orphan: isTx && depth === 0 && item.parent_span_id !== null,
      errors: errorsBySpan.get(item.span_id) ?? [],
      lines: linesBySpan.get(item.span_id) ?? [],
    });
    for (const k of (kids.get(item.span_id) ?? []).sort((a, b) => a.start - b.start)) visit(k, depth + 1);
  };
  for (const t of trace.transactions.filter((t) => !(t.parent_span_id && spanIds.has(t.parent_span_id)))) visit(t, 0);
  return all;
}

export function TracePage({ id, trace, query }: { id: string; trace: string; query: URLSearchParams }) {
  const at = query.get('at');
  const loaded = useLoad(() => api<Trace>('GET', `/projects/${id}/traces/${trace}${at ? `?at=${encodeURIComponent(at)}` : ''}`), `trace:${id}:${trace}:${at}`);
  return (
    <section>
      <Title sub={<ProjectNav id={id} current="performance" />}>{`Trace ${trace.slice(0, 8)}`}</Title>
      <p>
        <code>{trace}</code>
      </p>
      <Show loaded={loaded}>
        {(t) => {
          const rows = rowsOf(t);
          const placed = new Set(rows.flatMap((r) => [...r.errors.map((e) => e.id), ...r.lines.map((l) => `${l.t}:${l.body}`)]));
          const times = [...rows.flatMap((r) => [r.start, r.end]), ...t.errors.map((e) => e.at), ...t.logs.map((l) => l.t)];
          const start = Math.min(...times);
          const span = Math.max(1, Math.max(...times) - start);
          const pos = (v: number) => `${((v - start) / span) * 100}%`;
          return (
            <>
              {!t.sampled && (
                <p role="status">
                  This trace was not sampled: none of its transactions was kept (sent with a sample rate under 1, or counted only). Its errors and log lines are
                  below.
                </p>
              )}
              {rows.length > 0 && (
                <ol class="waterfall" aria-label="Spans of the trace, in the order they ran">
                  {rows.map((r) => (
                    <li key={r.id} style={{ paddingLeft: `${r.depth * 12}px` }} class={r.failed ? 'failed' : undefined}>
                      <span class="span-label">
                        <span class="muted">{r.op}</span> {r.label} {r.orphan && <span class="badge">orphan: its parent was not kept</span>}
                      </span>
                      <span class="span-track" aria-hidden="true">
                        <span class="span-bar" style={{ left: pos(r.start), width: `max(2px, ${((r.end - r.start) / span) * 100}%)` }} />
                      </span>
                      <span class="num">{ms(r.end - r.start)}</span>
                      {r.errors.map((e) => (
                        <p key={e.id} class="pinned error">
                          Error{' '}
                          {e.issue ? <a href={`/projects/${id}/issues/${e.issue}/events/${e.id}`}>issue {e.issue}</a> : <code>{e.id}</code>} at +{ms(e.at - start)}
                        </p>
                      ))}
                      {r.lines.map((l) => (
                        <p key={`${l.t}:${l.body}`} class={`pinned log-${l.level}`}>
                          {l.level}: {l.body} <span class="muted">+{ms(l.t - start)}</span>
                        </p>
                      ))}
                    </li>
                  ))}
                </ol>
              )}
              <h2>Errors</h2>
              {t.errors.length === 0 ? (
                <p class="muted">No error event named this trace.</p>
              ) : (
                <ul>
                  {t.errors.map((e) => (
                    <li key={e.id}>
                      {e.issue ? <a href={`/projects/${id}/issues/${e.issue}/events/${e.id}`}>Issue {e.issue}</a> : <code>{e.id}</code>} · {when(new Date(e.at).toISOString())}
                      {!placed.has(e.id) && <span class="muted"> (not inside a kept span)</span>}
                    </li>
                  ))}
                </ul>
              )}
              <h2>Log lines</h2>
              <LogLines id={id} lines={t.logs} />
            </>
          );
        }}
      </Show>
    </section>
  );
}

function LogLines({ id, lines }: { id: string; lines: Line[] }) {
  if (lines.length === 0) return <p class="muted">No log lines.</p>;
  return (
    <div class="scroll" tabIndex={0}>
      <table aria-label="Log lines">
        <thead>
          <tr>
            <th scope="col">Time (UTC)</th>
            <th scope="col">Level</th>
            <th scope="col">Line</th>
            <th scope="col">Trace</th>
          </tr>
        </thead>
        <tbody>
          {lines.map((l, i) => (
            <tr key={`${l.t}:${i}`} class={`log-${l.level}`}>
              <td>{new Date(l.t).toISOString().slice(11, 23)}</td>
              <td>{l.level}</td>
              <td>
                {l.body}
                {Object.keys(l.attrs).length > 0 && (
                  <span class="muted">
                    {' '}
                    {Object.entries(l.attrs)
                      .filter(([k]) => !k.startsWith('sentry.'))
                      .map(([k, v]) => `${k}=${String(v)}`)
                      .join(' ')}
                  </span>
                )}
              </td>
              <td>{l.trace_id ? <a href={`/projects/${id}/traces/${l.trace_id}?at=${encodeURIComponent(new Date(l.t).toISOString())}`}>{l.trace_id.slice(0, 8)}</a> : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;

export function LogsPage({ id, query }: { id: string; query: URLSearchParams }) {
  const range = query.get('range') ?? '1h';
  const params = new URLSearchParams([...query].filter(([k, v]) => ['range', 'level', 'q', 'attribute', 'trace'].includes(k) && v !== ''));
  const loaded = useLoad(() => api<LogList>('GET', `/projects/${id}/logs?${params}`), `logs:${id}:${params}`);
  const [live, setLive] = useState(false);
  const [fresh, setFresh] = useState<Line[]>([]);
  const set = (change: Record<string, string>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(change)) {
      if (v) next.set(k, v);
      else next.delete(k);
    }
    setFresh([]);
    navigate(`/projects/${id}/logs?${next}`, { replace: true });
  };
  // live tail: every two seconds, what came since the newest line shown
  useEffect(() => {
    if (!live || !loaded.data) return;
    const timer = setInterval(async () => {
      const newest = [...fresh, ...loaded.data!.lines][0];
      const since = new Date(newest ? newest.t : Date.now() - 60_000).toISOString();
      const more = await api<LogList>('GET', `/projects/${id}/logs?${params}&range=15m&since=${encodeURIComponent(since)}`).catch(() => null);
      if (more?.lines.length) setFresh((f) => [...more.lines, ...f].slice(0, 500));
    }, 2000);
    return () => clearInterval(timer);
  }, [live, loaded.data, fresh, params.toString()]);
  const levels = (query.get('level') ?? '').split(',').filter(Boolean);
  return (
    <section>
      <Title sub={<ProjectNav id={id} current="logs" />}>Logs</Title>
      <form
        class="actions"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          set({ q: String(f.get('q') ?? '').trim(), attribute: String(f.get('attribute') ?? '').trim() });
        }}
      >
        <label class="inline-label">
          Window{' '}
          <select value={range} onChange={(e) => set({ range: e.currentTarget.value })}>
            {['15m', '1h', '24h', '7d', '30d'].map((r) => (
              <option key={r} value={r}>
                last {r}
              </option>
            ))}
          </select>
        </label>{' '}
        <fieldset class="inline">
          <legend>Levels</legend>
          {LEVELS.map((l) => (
            <label key={l}>
              <input type="checkbox" checked={levels.includes(l)} onChange={(e) => set({ level: (e.currentTarget.checked ? [...levels, l] : levels.filter((x) => x !== l)).join(',') })} /> {l}
            </label>
          ))}
        </fieldset>{' '}
        <label class="inline-label">
          Text <input name="q" defaultValue={query.get('q') ?? ''} size={18} />
        </label>{' '}
        <label class="inline-label">
          Attribute <input name="attribute" defaultValue={query.get('attribute') ?? ''} placeholder="key=value" size={16} />
        </label>{' '}
        <button type="submit">Search</button>{' '}
        <label>
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} /> Live
        </label>
      </form>
      <Show loaded={loaded}>
        {(list) => (
          <>
            <p class="muted" aria-live="polite">
              {count(fresh.length + list.lines.length)} lines, newest first{list.more ? '; more match: narrow the window or the search' : ''}.
            </p>
            <LogLines id={id} lines={[...fresh, ...list.lines]} />
          </>
        )}
      </Show>
    </section>
  );
}
