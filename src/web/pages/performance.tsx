/**
 * The Performance pages (issue 69): the project's transaction groups over a window (sortable, filtered by
 * environment and release), one group's page (percentiles over time, latency histogram, where the time goes, N+1
 * queries, slowest samples), and Web Vitals per page. Every figure comes from the API's windowed buckets.
 */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { count, percent } from '../format.ts';
import { navigate } from '../router.ts';
import type { PerformanceGroup, PerformanceList, VitalsList } from '../types.ts';
import { Bars, Figures, Listed, Show, Time, Title, useLoad } from '../ui.tsx';
import { ProjectNav } from './projects.tsx';

type Row = PerformanceList['groups'][number];
export const RANGES = ['1h', '24h', '7d', '14d', '30d', '90d'] as const;

/** A duration in ms as people read it: 850 ms, 1.2 s, 2.5 min. */
export function ms(v: number | null | undefined): string {
  if (v === null || v === undefined) return '—';
  if (v < 1) return '<1 ms';
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 60_000) return `${Number((v / 1000).toFixed(v < 10_000 ? 2 : 1))} s`;
  return `${Number((v / 60_000).toFixed(1))} min`;
}

/** The window and filters of a page, from its query, and how to change them. */
function useWindow(base: string, query: URLSearchParams) {
  const range = query.get('range') ?? '24h';
  const environment = query.get('environment') ?? '';
  const release = query.get('release') ?? '';
  const params = new URLSearchParams({ range, ...(environment && { environment }), ...(release && { release }) }).toString();
  const set = (change: Record<string, string>) => {
    const next = new URLSearchParams({ range, environment, release, ...change });
    for (const [k, v] of [...next]) if (!v) next.delete(k);
    navigate(`${base}?${next}`, { replace: true });
  };
  return { range, environment, release, params, set };
}

function WindowControls({ w }: { w: ReturnType<typeof useWindow> }) {
  return (
    <div class="actions">
      <label class="inline-label">
        Window{' '}
        <select value={w.range} onChange={(e) => w.set({ range: e.currentTarget.value })}>
          {RANGES.map((r) => (
            <option key={r} value={r}>
              last {r}
            </option>
          ))}
        </select>
      </label>{' '}
      <label class="inline-label">
        Environment <input value={w.environment} size={12} onChange={(e) => w.set({ environment: e.currentTarget.value.trim() })} />
      </label>{' '}
      <label class="inline-label">
        Release <input value={w.release} size={14} onChange={(e) => w.set({ release: e.currentTarget.value.trim() })} />
      </label>
    </div>
  );
}

const COLUMNS: { key: keyof Row; label: string; show: (r: Row) => string }[] = [
  { key: 'per_minute', label: 'Per minute', show: (r) => (r.per_minute < 10 ? r.per_minute.toFixed(2) : count(Math.round(r.per_minute))) },
  { key: 'p50_ms', label: 'p50', show: (r) => ms(r.p50_ms) },
  { key: 'p75_ms', label: 'p75', show: (r) => ms(r.p75_ms) },
  { key: 'p95_ms', label: 'p95', show: (r) => ms(r.p95_ms) },
  { key: 'p99_ms', label: 'p99', show: (r) => ms(r.p99_ms) },
  { key: 'failure_rate', label: 'Failure rate', show: (r) => percent(r.failure_rate) },
  { key: 'apdex', label: 'Apdex', show: (r) => (r.apdex === null ? '—' : r.apdex.toFixed(2)) },
  { key: 'count', label: 'Transactions', show: (r) => count(r.count) },
];

export function PerformancePage({ id, query }: { id: string; query: URLSearchParams }) {
  const w = useWindow(`/projects/${id}/performance`, query);
  const loaded = useLoad(() => api<PerformanceList>('GET', `/projects/${id}/performance?${w.params}`), `performance:${id}:${w.params}`);
  const [sort, setSort] = useState<{ key: keyof Row; descending: boolean }>({ key: 'count', descending: true });
  return (
    <section>
      <Title sub={<ProjectNav id={id} current="performance" />}>Performance</Title>
      <p>
        <a href={`/projects/${id}/vitals?${w.params}`}>Web Vitals</a> · <a href={`/projects/${id}/logs`}>Logs</a>
      </p>
      <WindowControls w={w} />
      <Show loaded={loaded}>
        {(list) => {
          const rows = [...list.groups].sort((a, b) => ((Number(a[sort.key] ?? -1) - Number(b[sort.key] ?? -1)) || 0) * (sort.descending ? -1 : 1));
          return (
            <>
              <p class="muted">
                Apdex with a threshold of {list.apdex_threshold_ms} ms (APDEX_THRESHOLD_MS). Percentiles are read from log-scale buckets, within about 9%.
              </p>
              {rows.length === 0 ? (
                <p>No transactions in this window. Set tracesSampleRate in the SDK (docs/tracing.md).</p>
              ) : (
                <div class="scroll" tabIndex={0}>
                  <table aria-label="Transaction groups">
                    <thead>
                      <tr>
                        <th scope="col">Transaction</th>
                        {COLUMNS.map((c) => (
                          <th key={c.key} scope="col" aria-sort={sort.key === c.key ? (sort.descending ? 'descending' : 'ascending') : undefined}>
                            <button type="button" class="link" onClick={() => setSort({ key: c.key, descending: sort.key === c.key ? !sort.descending : true })}>
                              {c.label}
                            </button>
                          </th>
                        ))}
                        <th scope="col">Over the window</th>
                      </tr>
                    </thead>
                    <tbody>
                      {rows.map((r) => (
                        <tr key={r.key}>
                          <th scope="row">
                            <a href={`/projects/${id}/performance/${r.key}?${w.params}`}>{r.name}</a> <span class="muted">{r.op}</span>
                          </th>
                          {COLUMNS.map((c) => (
                            <td key={c.key} class="num">
                              {c.show(r)}
                            </td>
                          ))}
                          <td>
                            <Bars counts={r.sparkline} label={`${count(r.count)} transactions over the window`} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </>
          );
        }}
      </Show>
    </section>
  );
}

export function PerformanceGroupPage({ id, group, query }: { id: string; group: string; query: URLSearchParams }) {
  const w = useWindow(`/projects/${id}/performance/${group}`, query);
  const loaded = useLoad(() => api<PerformanceGroup>('GET', `/projects/${id}/performance/${group}?${w.params}`), `performance:${id}:${group}:${w.params}`);
  return (
    <section>
      <Show loaded={loaded}>
        {(g) => (
          <>
            <Title sub={<ProjectNav id={id} current="performance" />}>{g.name}</Title>
            <p>
              <a href={`/projects/${id}/performance?${w.params}`}>All transactions</a> · <span class="muted">{g.op}</span>
            </p>
            <WindowControls w={w} />
            <Figures
              items={[
                ['Transactions', count(g.count)],
                ['p50', ms(g.p50_ms)],
                ['p95', ms(g.p95_ms)],
                ['p99', ms(g.p99_ms)],
                ['Failure rate', percent(g.failure_rate)],
                ['Apdex', g.apdex === null ? '—' : g.apdex.toFixed(2)],
              ]}
            />
            <h2>Over the window</h2>
            <Listed
              label="Percentiles over the window"
              empty="Nothing in this window."
              heads={['From', 'Transactions', 'p50', 'p95', 'Failures']}
              items={g.chart.filter((p) => p.count > 0)}
              row={(p) => (
                <tr key={p.at}>
                  <td>
                    <Time at={p.at} />
                  </td>
                  <td class="num">{count(p.count)}</td>
                  <td class="num">{ms(p.p50_ms)}</td>
                  <td class="num">{ms(p.p95_ms)}</td>
                  <td class="num">{count(p.failures)}</td>
                </tr>
              )}
            />
            <h2>Latency</h2>
            <Bars counts={g.histogram.map((b) => b.count)} label={`latency histogram: ${g.histogram.map((b) => `${count(b.count)} up to ${ms(b.le_ms)}`).join(', ')}`} width={480} height={80} />
            <h2>Where the time goes</h2>
            <Listed
              label="Span groups by total time"
              empty="No spans."
              heads={['Operation', 'Description', 'Share of time', 'Per transaction', 'Total']}
              items={g.spans}
              row={(s) => (
                <tr key={`${s.op}:${s.description}`}>
                  <td>{s.op}</td>
                  <td>
                    <code>{s.description}</code>
                  </td>
                  <td class="num">{percent(s.share)}</td>
                  <td class="num">{s.per_transaction.toFixed(1)}</td>
                  <td class="num">{ms(s.total_ms)}</td>
                </tr>
              )}
            />
            {g.n_plus_one.length > 0 && (
              <>
                <h2>N+1 queries</h2>
                <ul>
                  {g.n_plus_one.map((s) => (
                    <li key={s.description}>
                      <code>{s.description}</code>: run 5 or more times in {count(s.n_plus_one)} of {count(g.count)} transactions
                    </li>
                  ))}
                </ul>
              </>
            )}
            <h2>Slowest samples</h2>
            <Listed
              label="Slowest samples"
              empty="No sample kept in this window (failed transactions, the slowest of each hour and a small share are kept)."
              heads={['When', 'Duration', 'Trace']}
              items={g.samples}
              row={(s) => (
                <tr key={s.span_id}>
                  <td>
                    <Time at={s.at} />
                  </td>
                  <td class="num">
                    {ms(s.duration_ms)}
                    {s.failed && ' (failed)'}
                  </td>
                  <td>
                    <a href={`/projects/${id}/traces/${s.trace_id}`}>
                      <code>{s.trace_id}</code>
                    </a>
                  </td>
                </tr>
              )}
            />
          </>
        )}
      </Show>
    </section>
  );
}

const VITALS = [
  ['lcp', 'LCP'],
  ['inp', 'INP'],
  ['cls', 'CLS'],
  ['fcp', 'FCP'],
  ['ttfb', 'TTFB'],
] as const;

export function VitalsPage({ id, query }: { id: string; query: URLSearchParams }) {
  const w = useWindow(`/projects/${id}/vitals`, query);
  const loaded = useLoad(() => api<VitalsList>('GET', `/projects/${id}/vitals?${w.params}`), `vitals:${id}:${w.params}`);
  return (
    <section>
      <Title sub={<ProjectNav id={id} current="performance" />}>Web Vitals</Title>
      <p>
        <a href={`/projects/${id}/performance?${w.params}`}>All transactions</a>
      </p>
      <WindowControls w={w} />
      <p class="muted">p75 of each vital, and the shares good / needs improvement / poor (web.dev&apos;s bounds).</p>
      <Show loaded={loaded}>
        {({ pages }) => (
          <Listed
            label="Web vitals per page"
            empty="No web vitals in this window: @sentry/browser sends them with browserTracingIntegration."
            heads={['Page', ...VITALS.map(([, label]) => label)]}
            items={pages}
            row={(p) => (
              <tr key={p.key}>
                <th scope="row">{p.page}</th>
                {VITALS.map(([key]) => {
                  const v = p.vitals[key];
                  return (
                    <td key={key} class="num">
                      {v ? (
                        <>
                          {key === 'cls' ? (v.p75 ?? 0).toFixed(3) : ms(v.p75)}
                          <br />
                          <span class="muted">
                            {percent(v.good)} / {percent(v.meh)} / {percent(v.poor)}
                          </span>
                        </>
                      ) : (
                        '—'
                      )}
                    </td>
                  );
                })}
              </tr>
            )}
          />
        )}
      </Show>
    </section>
  );
}
