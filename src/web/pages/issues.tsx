/** The Issues page (status tabs, kind, order, paging) and an issue with its latest event. */
import { api } from '../api.ts';
import { count, when } from '../format.ts';
import { navigate } from '../router.ts';
import type { Issue } from '../types.ts';
import { Failure, Show, Title, useAction, useLoad } from '../ui.tsx';
import { ProjectNav } from './projects.tsx';

const PAGE_SIZE = 25;
const STATUSES = ['unresolved', 'resolved', 'ignored'] as const;

export function IssuesPage({ id, query }: { id: string; query: URLSearchParams }) {
  const status = (STATUSES as readonly string[]).includes(query.get('status') ?? '') ? query.get('status')! : 'unresolved';
  const kind = query.get('kind') === 'error' || query.get('kind') === 'security' ? query.get('kind')! : '';
  const order = query.get('order') === 'id' ? 'id' : 'last_seen';
  const page = Math.max(0, Number(query.get('page') ?? 0) | 0);
  const params = new URLSearchParams({ status, order, limit: String(PAGE_SIZE), offset: String(page * PAGE_SIZE), ...(kind ? { kind } : {}) });
  const loaded = useLoad(() => api<{ issues: Issue[]; total: number }>('GET', `/projects/${id}/issues?${params}`), `issues:${id}:${params}`);
  const link = (change: Record<string, string>) => {
    const next = new URLSearchParams({ status, order, ...(kind ? { kind } : {}), page: String(page), ...change });
    if (next.get('kind') === '') next.delete('kind');
    if (next.get('page') === '0') next.delete('page');
    return `/projects/${id}/issues?${next}`;
  };
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
          Order{' '}
          <select value={order} onChange={(e) => navigate(link({ order: e.currentTarget.value, page: '0' }), { replace: true })}>
            <option value="last_seen">Last seen, newest first</option>
            <option value="id">Id</option>
          </select>
        </label>
      </div>
      <Show loaded={loaded}>
        {({ issues, total }) =>
          issues.length === 0 ? (
            <p>No {status} issues{kind ? ` of kind ${kind}` : ''}.</p>
          ) : (
            <>
              <table class="issues">
                <caption class="sr-only">
                  {status} issues, {total} in all
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Issue</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Events</th>
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
                      </td>
                      <td>{i.kind}</td>
                      <td class="num">{count(i.event_count)}</td>
                      <td>{when(i.last_seen)}</td>
                      <td>{i.last_release ?? '—'}</td>
                      <td class="num">{i.regression_count}</td>
                      <td>{i.companies.length ? i.companies.join(', ') : '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
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

type IssueDetail = Issue & { latest_event: unknown };

export function IssuePage({ id, issue }: { id: string; issue: string }) {
  const loaded = useLoad(() => api<IssueDetail>('GET', `/projects/${id}/issues/${issue}`), `issue:${id}:${issue}`);
  const [act, error, busy] = useAction();
  const setStatus = (status: Issue['status']) =>
    void act(async () => {
      await api('POST', `/projects/${id}/issues/${issue}/status`, { status });
      loaded.reload();
    });
  return (
    <Show loaded={loaded}>
      {(i) => (
        <section>
          <Title sub={<ProjectNav id={id} current="issues" />}>{i.title}</Title>
          <p class="actions">
            <span class={`status status-${i.status}`}>{i.status}</span>{' '}
            {i.status !== 'resolved' && (
              <button type="button" disabled={busy} onClick={() => setStatus('resolved')}>
                Resolve
              </button>
            )}{' '}
            {i.status !== 'ignored' && (
              <button type="button" disabled={busy} onClick={() => setStatus('ignored')}>
                Ignore
              </button>
            )}{' '}
            {i.status !== 'unresolved' && (
              <button type="button" disabled={busy} onClick={() => setStatus('unresolved')}>
                Unresolve
              </button>
            )}
          </p>
          {error && <Failure error={error} />}
          <dl class="fields">
            <dt>Id</dt>
            <dd>{i.id}</dd>
            <dt>Kind</dt>
            <dd>{i.kind}</dd>
            <dt>Exception type</dt>
            <dd>{i.exception_type ?? '—'}</dd>
            <dt>Level</dt>
            <dd>{i.level ?? '—'}</dd>
            <dt>Events</dt>
            <dd>{count(i.event_count)}</dd>
            <dt>First seen</dt>
            <dd>{when(i.first_seen)}</dd>
            <dt>Last seen</dt>
            <dd>{when(i.last_seen)}</dd>
            <dt>Last release</dt>
            <dd>{i.last_release ?? '—'}</dd>
            <dt>Companies</dt>
            <dd>{i.companies.length ? i.companies.join(', ') : '—'}</dd>
          </dl>
          <h2>Regressions</h2>
          <dl class="fields">
            <dt>Times resolved</dt>
            <dd>{i.resolved_count}</dd>
            <dt>Regressions</dt>
            <dd data-field="regression_count">{i.regression_count}</dd>
            <dt>Last regression</dt>
            <dd>{i.last_regressed_at ? `${when(i.last_regressed_at)} (${i.last_regression_kind === 'new_release' ? 'in a new release' : 'in the same release'})` : '—'}</dd>
          </dl>
          <h2>Latest event</h2>
          {i.latest_event ? <pre class="payload" tabIndex={0} aria-label="Latest event payload">{JSON.stringify(i.latest_event, null, 2)}</pre> : <p>No event stored.</p>}
        </section>
      )}
    </Show>
  );
}
