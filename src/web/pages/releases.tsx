/** The Releases page (a sortable table per environment) and a release page with its hourly charts. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../api.ts';
import { count, percent, when } from '../format.ts';
import { navigate } from '../router.ts';
import type { Channel, HourPoint, PerformanceList, Project, Release, ReleaseDeploys as ReleaseDeploysAnswer, ReleaseIssues as ReleaseIssuesAnswer } from '../types.ts';
import { ms } from './performance.tsx';
import { Figures, Rate, Show, Time, Title, useLoad } from '../ui.tsx';
import { releaseHref, term } from './issues.tsx';
import { ProjectNav } from './projects.tsx';

type Column = { key: string; label: string; value(r: Release): number | string | null };
const COLUMNS: Column[] = [
  { key: 'release', label: 'Release', value: (r) => r.release },
  { key: 'sessions', label: 'Sessions', value: (r) => r.sessions.total },
  { key: 'users', label: 'Users', value: (r) => r.users.total },
  { key: 'crash_free_sessions', label: 'Crash-free sessions', value: (r) => r.crash_free_sessions },
  { key: 'crash_free_users', label: 'Crash-free users', value: (r) => r.crash_free_users },
  { key: 'adoption', label: 'Adoption (24 h)', value: (r) => r.adoption_sessions },
  { key: 'first_seen', label: 'First seen', value: (r) => r.first_seen },
  { key: 'last_seen', label: 'Last seen', value: (r) => r.last_seen },
];

function compare(a: number | string | null, b: number | string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}

function useProjectName(id: string): string {
  const loaded = useLoad(() => api<Project>('GET', `/projects/${id}`), `project:${id}`);
  return loaded.data?.name ?? `Project ${id}`;
}

/** The crash-free rate the project's alerts hold releases to: the strictest of its channels on release.crash_free, else 99%. */
function useThreshold(id: string): number {
  const loaded = useLoad(() => api<{ channels: Channel[] }>('GET', `/projects/${id}/channels`), `channels:${id}`);
  const thresholds = (loaded.data?.channels ?? []).filter((c) => c.on.includes('release.crash_free')).map((c) => c.crash_free.threshold);
  return thresholds.length ? Math.max(...thresholds) : 99;
}

export function ReleasesPage({ id, query }: { id: string; query: URLSearchParams }) {
  const name = useProjectName(id);
  const threshold = useThreshold(id);
  const loaded = useLoad(() => api<{ releases: Release[] }>('GET', `/projects/${id}/releases`), `releases:${id}`);
  const environment = query.get('environment') ?? '';
  const [sort, setSort] = useState<{ key: string; descending: boolean }>({ key: 'last_seen', descending: true });
  const pick = (env: string) => navigate(`/projects/${id}/releases${env ? `?environment=${encodeURIComponent(env)}` : ''}`, { replace: true });
  return (
    <section>
      <Title sub={<ProjectNav id={id} current="releases" />}>{`${name}: releases`}</Title>
      <Show loaded={loaded}>
        {({ releases }) => {
          const environments = [...new Set(releases.map((r) => r.environment))].sort();
          const column = COLUMNS.find((c) => c.key === sort.key)!;
          const shown = environment ? [environment] : environments;
          return (
            <>
              <label class="inline-label">
                Environment{' '}
                <select value={environment} onChange={(e) => pick(e.currentTarget.value)}>
                  <option value="">All environments</option>
                  {environments.map((env) => (
                    <option key={env} value={env}>
                      {env}
                    </option>
                  ))}
                </select>
              </label>
              <p class="muted">
                Crash-free rates under {threshold}% (the project&apos;s alert threshold) are marked; more than 5 points under, with ⚠.
              </p>
              {releases.length === 0 && <p>No sessions yet. Installations report them to POST /api/v1/sessions with the public key.</p>}
              {shown.map((env) => {
                const rows = releases.filter((r) => r.environment === env).sort((a, b) => compare(column.value(a), column.value(b)) * (sort.descending ? -1 : 1));
                return (
                  <section key={env} aria-labelledby={`env-${env}`}>
                    <h2 id={`env-${env}`}>{env}</h2>
                    <div class="scroll" tabIndex={0}>
                      <table class="releases">
                        <caption class="sr-only">
                          Releases in {env}, sorted by {column.label}
                        </caption>
                        <thead>
                          <tr>
                            {COLUMNS.map((c) => (
                              <th key={c.key} scope="col" aria-sort={sort.key === c.key ? (sort.descending ? 'descending' : 'ascending') : 'none'}>
                                <button type="button" class="sort" onClick={() => setSort({ key: c.key, descending: sort.key === c.key ? !sort.descending : c.key !== 'release' })}>
                                  {c.label}
                                </button>
                              </th>
                            ))}
                            <th scope="col">Issues</th>
                          </tr>
                        </thead>
                        <tbody>
                          {rows.map((r) => (
                            <ReleaseLine key={`${r.environment}/${r.release}`} id={id} r={r} threshold={threshold} />
                          ))}
                        </tbody>
                      </table>
                    </div>
                  </section>
                );
              })}
            </>
          );
        }}
      </Show>
    </section>
  );
}

function ReleaseLine({ id, r, threshold }: { id: string; r: Release; threshold: number }) {
  const adoption = r.adoption_sessions;
  const issues = (search: string) => `/projects/${id}/issues?search=${encodeURIComponent(search)}`;
  return (
    <tr>
      <td>
        <a href={`${releaseHref(id, r.release)}?environment=${encodeURIComponent(r.environment)}`}>{r.release}</a>
      </td>
      <td class="num">{count(r.sessions.total)}</td>
      <td class="num">{count(r.users.total)}</td>
      <td class="num">
        <Rate rate={r.crash_free_sessions} threshold={threshold} />
      </td>
      <td class="num">
        <Rate rate={r.crash_free_users} threshold={threshold} />
      </td>
      <td class="num">
        {adoption !== null && <span class="adoption" style={{ width: `${Math.max(2, Math.round(adoption * 60))}px` }} aria-hidden="true" />}
        {percent(adoption)}
      </td>
      <td>
        <Time at={r.first_seen} />
      </td>
      <td>
        <Time at={r.last_seen} />
      </td>
      <td>
        {r.issues ? (
          <>
            <a href={issues(`${term('release', r.release)} ${term('environment', r.environment)}`)}>{count(r.issues.with_events)}</a>
            {r.issues.new > 0 && (
              <>
                {' '}
                (<a href={issues(term('first-release', r.release))}>{count(r.issues.new)} new</a>)
              </>
            )}
          </>
        ) : (
          '—'
        )}
      </td>
    </tr>
  );
}

const RANGES = ['24h', '7d', '14d', '90d'] as const;

export function ReleasePage({ id, release, query }: { id: string; release: string; query: URLSearchParams }) {
  const environment = query.get('environment') ?? '';
  const range = (RANGES as readonly string[]).includes(query.get('range') ?? '') ? query.get('range')! : '24h';
  const params = new URLSearchParams({ range, ...(environment ? { environment } : {}) });
  const loaded = useLoad(
    () => api<Release & { series: HourPoint[]; since: string }>('GET', `/projects/${id}/releases/${encodeURIComponent(release)}?${params}`),
    `release:${id}:${release}:${params}`,
  );
  const to = (r: string) => `/projects/${id}/releases/${encodeURIComponent(release)}?${new URLSearchParams({ ...(environment ? { environment } : {}), range: r })}`;
  const threshold = useThreshold(id);
  // its transactions over the chart's range: p95 and failure rate beside the crash-free rates (issue 69)
  const perfParams = new URLSearchParams({ range, release, ...(environment ? { environment } : {}) });
  const perf = useLoad(() => api<PerformanceList>('GET', `/projects/${id}/performance?${perfParams}`), `performance:${id}:${perfParams}`);
  const tx = perf.data?.total;
  const noSessions = loaded.error instanceof ApiError && loaded.error.reason === 'release_not_found';
  return (
    <section>
      <Title sub={<ProjectNav id={id} current="releases" />}>{`Release ${release}`}</Title>
      {noSessions ? (
        <p>No sessions of this release are stored{environment ? ` in ${environment}` : ''}; its issues are below.</p>
      ) : (
        <Show loaded={loaded}>
          {(r) => (
          <>
            <Figures
              items={[
                ['Environment', r.environment],
                ['Crash-free sessions', <Rate rate={r.crash_free_sessions} threshold={threshold} />],
                ['Crash-free users', <Rate rate={r.crash_free_users} threshold={threshold} />],
                ['Adoption (24 h)', percent(r.adoption_sessions)],
                ['Sessions', count(r.sessions.total)],
                ['Users', count(r.users.total)],
                ...(tx && tx.count > 0
                  ? ([
                      ['Transactions p95', <a href={`/projects/${id}/performance?${perfParams}`}>{ms(tx.p95_ms)}</a>],
                      ['Failed transactions', percent(tx.failure_rate)],
                    ] as [string, preact.ComponentChildren][])
                  : []),
              ]}
            />
            <nav aria-label="Chart range" class="tabs">
              {RANGES.map((r) => (
                <a key={r} href={to(r)} aria-current={r === range ? 'page' : undefined}>
                  {r}
                </a>
              ))}
            </nav>
            <Charts series={r.series} since={r.since} />
            <details>
              <summary>Hourly figures</summary>
              <div class="scroll" tabIndex={0}>
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Hour</th>
                      <th scope="col">Healthy</th>
                      <th scope="col">Errored</th>
                      <th scope="col">Abnormal</th>
                      <th scope="col">Crashed</th>
                      <th scope="col">Crash-free sessions</th>
                      <th scope="col">Crash-free users</th>
                    </tr>
                  </thead>
                  <tbody>
                    {r.series.map((h) => (
                      <tr key={h.hour}>
                        <td>{when(h.hour)}</td>
                        <td class="num">{h.sessions.ok}</td>
                        <td class="num">{h.sessions.errored}</td>
                        <td class="num">{h.sessions.abnormal}</td>
                        <td class="num">{h.sessions.crashed}</td>
                        <td class="num">{percent(h.crash_free_sessions)}</td>
                        <td class="num">{percent(h.crash_free_users)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </details>
          </>
        )}
        </Show>
      )}
      <ReleaseDeploys id={id} release={release} />
      <ReleaseIssues id={id} release={release} />
    </section>
  );
}

/** Where and when the release was deployed (sentry-cli deploys new); nothing when it never was. */
function ReleaseDeploys({ id, release }: { id: string; release: string }) {
  const loaded = useLoad(() => api<ReleaseDeploysAnswer>('GET', `/projects/${id}/releases/${encodeURIComponent(release)}/deploys`), `release-deploys:${id}:${release}`);
  const deploys = loaded.data?.deploys ?? [];
  if (deploys.length === 0) return null;
  return (
    <section aria-labelledby="release-deploys">
      <h2 id="release-deploys">Deploys ({count(deploys.length)})</h2>
      <ul>
        {deploys.map((d, i) => (
          <li key={i}>
            <strong>{d.environment}</strong> {d.name && <>{d.url ? <a href={d.url}>{d.name}</a> : d.name} </>}
            <span class="muted">
              finished <Time at={d.finished_at} />
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The release's new issues and the ones that regressed in it, each a link, with a link to all of them. */
function ReleaseIssues({ id, release }: { id: string; release: string }) {
  const loaded = useLoad(() => api<ReleaseIssuesAnswer>('GET', `/projects/${id}/releases/${encodeURIComponent(release)}/issues`), `release-issues:${id}:${release}`);
  const part = (title: string, some: ReleaseIssuesAnswer['new'], all: string | null) => (
    <section aria-labelledby={`ri-${title}`}>
      <h2 id={`ri-${title}`}>
        {title} ({count(some.total)})
      </h2>
      {some.issues.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul>
          {some.issues.map((i) => (
            <li key={i.id}>
              <a href={`/projects/${id}/issues/${i.id}`}>{i.title}</a> <span class="muted">#{i.id}</span> <span class={`status status-${i.status}`}>{i.status}</span>{' '}
              <span class="muted">
                last seen <Time at={i.last_seen} />
              </span>
            </li>
          ))}
        </ul>
      )}
      {all && some.total > some.issues.length && <a href={all}>All {count(some.total)}</a>}
    </section>
  );
  return (
    <Show loaded={loaded}>
      {(r) => (
        <>
          {part('New issues', r.new, `/projects/${id}/issues?search=${encodeURIComponent(term('first-release', release))}`)}
          {part('Regressed issues', r.regressed, null)}
        </>
      )}
    </Show>
  );
}

/** The charts of `series` from `since` (ISO) to now; drawn again when the loaded release changes. */
function Charts({ series, since }: { series: HourPoint[]; since: string }) {
  const sessions = useRef<HTMLDivElement>(null);
  const rates = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let plots: { destroy(): void }[] = [];
    let current = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const draw = () =>
      void import('../chart.ts').then(({ drawCharts }) => {
        if (!current || !sessions.current || !rates.current) return;
        for (const plot of plots) plot.destroy();
        plots = drawCharts({ sessions: sessions.current, rates: rates.current }, series, new Date(since), new Date());
      });
    // drawn again at the new width when the window changes (a phone turned, a window resized)
    const resized = () => {
      clearTimeout(timer);
      timer = setTimeout(draw, 150);
    };
    draw();
    window.addEventListener('resize', resized);
    return () => {
      current = false;
      clearTimeout(timer);
      window.removeEventListener('resize', resized);
      for (const plot of plots) plot.destroy();
    };
  }, [series, since]);
  return (
    <div class="charts">
      <div ref={sessions} role="img" aria-label="Chart of sessions per hour by final status; the figures are in the table below" data-chart="sessions" />
      <div ref={rates} role="img" aria-label="Chart of the crash-free rate per hour; the figures are in the table below" data-chart="rates" />
    </div>
  );
}
