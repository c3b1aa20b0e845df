/** The Issues page: status tabs, filters (kind, release, environment, level, company, words), order and paging. */
import { api } from '../api.ts';
import { count, when } from '../format.ts';
import { navigate } from '../router.ts';
import type { IssueRow } from '../types.ts';
import { Show, Title, useLoad } from '../ui.tsx';
import { Bars } from './issue.tsx';
import { ProjectNav } from './projects.tsx';

const PAGE_SIZE = 25;
const STATUSES = ['unresolved', 'resolved', 'ignored'] as const;
const ORDERS = { last_seen: 'Last seen, newest first', first_seen: 'First seen, newest first', event_count: 'Most events first', id: 'Id' } as const;
const LEVELS = ['fatal', 'error', 'warning', 'info', 'debug'] as const;
/** The filters a person types: each a query parameter of the list. */
const TEXT_FILTERS = [
  ['query', 'Search titles and culprits'],
  ['release', 'Release'],
  ['environment', 'Environment'],
  ['company', 'Company'],
] as const;

export function IssuesPage({ id, query }: { id: string; query: URLSearchParams }) {
  const status = (STATUSES as readonly string[]).includes(query.get('status') ?? '') ? query.get('status')! : 'unresolved';
  const kind = query.get('kind') === 'error' || query.get('kind') === 'security' ? query.get('kind')! : '';
  const order = (query.get('order') ?? '') in ORDERS ? (query.get('order') as keyof typeof ORDERS) : 'last_seen';
  const level = (LEVELS as readonly string[]).includes(query.get('level') ?? '') ? query.get('level')! : '';
  const typed = Object.fromEntries(TEXT_FILTERS.map(([name]) => [name, query.get(name) ?? '']).filter(([, v]) => v !== ''));
  const page = Math.max(0, Number(query.get('page') ?? 0) | 0);
  const chosen = { status, order, ...(kind ? { kind } : {}), ...(level ? { level } : {}), ...typed };
  const params = new URLSearchParams({ ...chosen, limit: String(PAGE_SIZE), offset: String(page * PAGE_SIZE) });
  const loaded = useLoad(() => api<{ issues: IssueRow[]; total: number }>('GET', `/projects/${id}/issues?${params}`), `issues:${id}:${params}`);
  const link = (change: Record<string, string>) => {
    const next = new URLSearchParams({ ...chosen, page: String(page), ...change });
    for (const [k, v] of [...next]) if (v === '' || (k === 'page' && v === '0')) next.delete(k);
    return `/projects/${id}/issues?${next}`;
  };
  const search = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    navigate(link({ ...Object.fromEntries(TEXT_FILTERS.map(([name]) => [name, String(form.get(name) ?? '').trim()])), page: '0' }));
  };
  const filtered = Boolean(kind || level || Object.keys(typed).length);
  return (
    <section>
      <Title sub={<ProjectNav id={id} current="issues" />}>Issues</Title>
      <nav aria-label="Issue status" class="tabs">
        {STATUSES.map((s) => (
          <a key={s} href={link({ status: s, page: '0' })} aria-current={s === status ? 'page' : undefined}>
            {s[0]!.toUpperCase() + s.slice(1)}
          </a>
        ))}
      </nav>
      <form class="inline search" role="search" onSubmit={search}>
        {TEXT_FILTERS.map(([name, label]) => (
          <label key={name}>
            {label}
            <input name={name} type="text" defaultValue={typed[name] ?? ''} key={`${name}:${typed[name] ?? ''}`} />
          </label>
        ))}
        <button type="submit">Filter</button>
        {filtered && <a href={link({ kind: '', level: '', query: '', release: '', environment: '', company: '', page: '0' })}>Clear filters</a>}
      </form>
      <div class="filters">
        <label class="inline-label">
          Kind{' '}
          <select value={kind} onChange={(e) => navigate(link({ kind: e.currentTarget.value, page: '0' }), { replace: true })}>
            <option value="">Errors and security</option>
            <option value="error">Errors</option>
            <option value="security">Security</option>
          </select>
        </label>
        <label class="inline-label">
          Level{' '}
          <select value={level} onChange={(e) => navigate(link({ level: e.currentTarget.value, page: '0' }), { replace: true })}>
            <option value="">Any level</option>
            {LEVELS.map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </select>
        </label>
        <label class="inline-label">
          Order{' '}
          <select value={order} onChange={(e) => navigate(link({ order: e.currentTarget.value, page: '0' }), { replace: true })}>
            {Object.entries(ORDERS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Show loaded={loaded}>
        {({ issues, total }) =>
          issues.length === 0 ? (
            <p>No {status} issues{filtered ? ' match these filters' : ''}.</p>
          ) : (
            <>
              <div class="scroll" tabIndex={0}>
                <table class="issues">
                  <caption class="sr-only">
                    {status} issues, {total} in all
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">Issue</th>
                      <th scope="col">Kind</th>
                      <th scope="col">Events</th>
                      <th scope="col">Last 24 hours</th>
                      <th scope="col">Last seen</th>
                      <th scope="col">Last release</th>
                      <th scope="col">Regressions</th>
                      <th scope="col">Companies</th>
                    </tr>
                  </thead>
                  <tbody>
                    {issues.map((i) => (
                      <tr key={i.id}>
                        <td>
                          <a href={`/projects/${id}/issues/${i.id}`}>{i.title}</a> <span class="muted">#{i.id}</span>
                          {i.user_feedback > 0 && <span class="muted"> · {i.user_feedback === 1 ? '1 user feedback' : `${count(i.user_feedback)} user feedback`}</span>}
                          {i.culprit && (
                            <div class="muted">
                              <code>{i.culprit}</code>
                            </div>
                          )}
                        </td>
                        <td>{i.kind}</td>
                        <td class="num">{count(i.event_count)}</td>
                        <td>
                          <Bars counts={i.events_24h} label={`${count(i.events_24h.reduce((a, b) => a + b, 0))} events in the last 24 hours`} />
                        </td>
                        <td>{when(i.last_seen)}</td>
                        <td>{i.last_release ?? '—'}</td>
                        <td class="num">{i.regression_count}</td>
                        <td>{i.companies.length ? i.companies.join(', ') : '—'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <nav aria-label="Pages" class="pager">
                {page > 0 ? <a href={link({ page: String(page - 1) })}>Previous page</a> : <span />}
                <span>
                  {page * PAGE_SIZE + 1}–{page * PAGE_SIZE + issues.length} of {total}
                </span>
                {(page + 1) * PAGE_SIZE < total ? <a href={link({ page: String(page + 1) })}>Next page</a> : <span />}
              </nav>
            </>
          )
        }
      </Show>
    </section>
  );
}
