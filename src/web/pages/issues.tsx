/**
 * The Issues page, to triage from: status tabs, one search in Sentry's syntax (what it could not apply named under
 * it), kind and order, each issue with its events (those of the release and environment searched, when one is),
 * users, last 24 hours, releases and assignee; many issues resolved, ignored or assigned at once; and keys (`?`).
 */
import { useRef, useState } from 'preact/hooks';
import { quoted } from '../../domain/search.ts';
import { api } from '../api.ts';
import { count } from '../format.ts';
import { useShortcuts } from '../keys.tsx';
import { navigate } from '../router.ts';
import type { IssueList, IssueRow } from '../types.ts';
import { Bars, Failure, Show, Time, Title, useAction, useLoad } from '../ui.tsx';
import { ProjectNav } from './projects.tsx';

const PAGE_SIZE = 25;
const STATUSES = ['unresolved', 'resolved', 'ignored'] as const;
const ORDERS = { last_seen: 'Last seen, newest first', first_seen: 'First seen, newest first', event_count: 'Most events first', id: 'Id' } as const;
/** The list parameters older links carry, read into the search. */
const FIELD_PARAMS = ['release', 'environment', 'level', 'company'] as const;

/** The emails of the organisation's active members, whom an issue may be assigned to (empty while loading). */
export function useMembers(): string[] {
  const loaded = useLoad(() => api<{ users: { email: string; active: boolean; disabled: boolean }[] }>('GET', '/org'), 'org');
  return (loaded.data?.users ?? []).filter((u) => u.active && !u.disabled).map((u) => u.email);
}

/** A release's page. */
export const releaseHref = (project: string, release: string) => `/projects/${project}/releases/${encodeURIComponent(release)}`;

/** A search term with its value quoted when it must be. */
export const term = (key: string, value: string) => `${key}:${quoted(value)}`;

/** The search a page address asks for: its `search`, and the filters older links name as parameters. */
function searchOf(query: URLSearchParams): string {
  const parts = FIELD_PARAMS.flatMap((f) => (query.get(f) ? [term(f, query.get(f)!)] : []));
  if (query.get('query')) parts.push(query.get('query')!);
  if (query.get('search')) parts.push(query.get('search')!);
  return parts.join(' ');
}

export function IssuesPage({ id, query }: { id: string; query: URLSearchParams }) {
  const status = (STATUSES as readonly string[]).includes(query.get('status') ?? '') ? query.get('status')! : 'unresolved';
  const kind = ['error', 'security', 'monitor', 'installation', 'uptime'].includes(query.get('kind') ?? '') ? query.get('kind')! : '';
  const order = (query.get('order') ?? '') in ORDERS ? (query.get('order') as keyof typeof ORDERS) : 'last_seen';
  const search = searchOf(query);
  const page = Math.max(0, Number(query.get('page') ?? 0) | 0);
  const chosen = { status, order, ...(kind ? { kind } : {}), ...(search ? { search } : {}) };
  const params = new URLSearchParams({ ...chosen, limit: String(PAGE_SIZE), offset: String(page * PAGE_SIZE) });
  const loaded = useLoad(() => api<IssueList>('GET', `/projects/${id}/issues?${params}`), `issues:${id}:${params}`);
  const link = (change: Record<string, string>) => {
    const next = new URLSearchParams({ ...chosen, page: String(page), ...change });
    for (const [k, v] of [...next]) if (v === '' || (k === 'page' && v === '0')) next.delete(k);
    return `/projects/${id}/issues?${next}`;
  };
  const box = useRef<HTMLInputElement>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    navigate(link({ search: String(new FormData(e.currentTarget as HTMLFormElement).get('search') ?? '').trim(), page: '0' }));
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
      <form class="inline search" role="search" onSubmit={submit}>
        <label class="grow">
          Search
          <input
            ref={box}
            name="search"
            type="search"
            defaultValue={search}
            key={search}
            placeholder="is:unresolved release:erp@17.0.5 user.email:ana@example.com &quot;card declined&quot;"
            aria-describedby="search-help"
          />
        </label>
        <button type="submit">Search</button>
        {search && <a href={link({ search: '', page: '0' })}>Clear</a>}
      </form>
      <SearchHelp />
      <div class="filters">
        <label class="inline-label">
          Kind{' '}
          <select value={kind} onChange={(e) => navigate(link({ kind: e.currentTarget.value, page: '0' }), { replace: true })}>
            <option value="">Every kind</option>
            <option value="error">Errors</option>
            <option value="security">Security</option>
            <option value="monitor">Monitors</option>
            <option value="installation">Installations</option>
            <option value="uptime">Uptime</option>
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
        {(list) => (
          <>
            {list.search && list.search.unknown.length > 0 && (
              <div class="notice" role="status">
                <p>Not applied:</p>
                <ul>
                  {list.search.unknown.map((u) => (
                    <li key={u.term}>
                      <code>{u.term}</code>: {u.reason}
                    </li>
                  ))}
                </ul>
              </div>
            )}
            {list.issues.length === 0 ? (
              <p>
                No {list.status} issues{search ? <> match <code>{search}</code></> : ''}.
                {search && ' Each term must hold; the syntax is under the search box.'}
              </p>
            ) : (
              <IssueTable id={id} list={list} reload={loaded.reload} focusSearch={() => box.current?.focus()} />
            )}
            {list.total > PAGE_SIZE && (
              <nav aria-label="Pages" class="pager">
                {page > 0 ? <a href={link({ page: String(page - 1) })}>Previous page</a> : <span />}
                <span>
                  {page * PAGE_SIZE + 1}–{page * PAGE_SIZE + list.issues.length} of {totalWords(list)}
                </span>
                {/* an estimated total may be short: a full page has a next one */}
                {(page + 1) * PAGE_SIZE < list.total || (list.total_estimated && list.issues.length === PAGE_SIZE) ? (
                  <a href={link({ page: String(page + 1) })}>Next page</a>
                ) : (
                  <span />
                )}
              </nav>
            )}
          </>
        )}
      </Show>
    </section>
  );
}

/** The search syntax, folded under the box. */
function SearchHelp() {
  const rows: [string, string][] = [
    ['is:unresolved, is:resolved, is:ignored', 'the status listed (the tabs do the same)'],
    ['is:regressed, is:assigned, is:unassigned', 'regressed since last resolved; assigned or not'],
    ['assigned:me, assigned:ana@example.com', 'assigned to you, to a member'],
    ['level:error', 'its newest event’s level'],
    ['release:erp@17.0.5 environment:production', 'with events of that release in that environment (the counts are theirs)'],
    ['first-release:erp@17.0.5', 'first seen in that release'],
    ['user.id:42, user.email:ana@example.com, has:user', 'events of that user, of any user'],
    ['company:acme, browser:Chrome, os.name:Windows, any-tag:value', 'events with that tag value'],
    ['age:-24h, last-seen:-1h, age:+7d', 'first or last seen within (−) or before (+) m, h, d or w'],
    ['times-seen:>100', 'its events: >, >=, <, <= or a number'],
    ['!release:erp@17.0.4', '! before a term: not that'],
    ['"card declined" checkout', 'words in the title or culprit'],
  ];
  return (
    <details class="hint" id="search-help">
      <summary>Search syntax (?)</summary>
      <div class="scroll" tabIndex={0}>
        <table>
          <caption class="sr-only">Search terms</caption>
          <tbody>
            {rows.map(([t, meaning]) => (
              <tr key={t}>
                <th scope="row">
                  <code>{t}</code>
                </th>
                <td>{meaning}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

/** A change the bulk bar and the keys make. */
type Change = { status: { status: 'unresolved' | 'resolved' | 'ignored'; in_next_release?: boolean } } | { assignee: string | null };

/** How many issues the list holds: an estimated total says "about". */
const totalWords = (list: IssueList) => `${list.total_estimated ? 'about ' : ''}${list.total}`;

function IssueTable({ id, list, reload, focusSearch }: { id: string; list: IssueList; reload: () => void; focusSearch: () => void }) {
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [at, setAtState] = useState(-1);
  // The cursor as keys see it: `j` then `x` typed faster than a render still act on the row `j` moved to.
  const cursor = useRef(-1);
  const setAt = (row: number) => {
    cursor.current = row;
    setAtState(row);
  };
  const [act, error, busy] = useAction();
  const members = useMembers();
  const { issues } = list;
  const filtered = issues.some((i) => i.matching_events !== null);
  const apply = (ids: string[], change: Change) =>
    void act(async () => {
      await api('POST', `/projects/${id}/issues/bulk`, { ids, ...change });
      setSelected(new Set());
      reload();
    });
  const toggle = (issue: string) =>
    setSelected((s) => {
      const next = new Set(s);
      if (next.has(issue)) next.delete(issue);
      else next.add(issue);
      return next;
    });
  const focusRow = (n: number) => {
    const row = Math.max(0, Math.min(issues.length - 1, n));
    setAt(row);
    document.querySelector<HTMLAnchorElement>(`#issue-row-${issues[row]!.id} a.title`)?.focus();
  };
  /** The issues a key acts on: the selected ones, else the one at the cursor. */
  const targets = () => (selected.size > 0 ? [...selected] : cursor.current >= 0 ? [issues[cursor.current]!.id] : []);
  const help = useShortcuts([
    { key: 'j', does: 'Next issue', run: () => focusRow(cursor.current + 1) },
    { key: 'k', does: 'Previous issue', run: () => focusRow(cursor.current - 1) },
    { key: 'o', does: 'Open the issue', run: () => cursor.current >= 0 && navigate(`/projects/${id}/issues/${issues[cursor.current]!.id}`) },
    { key: 'x', does: 'Select the issue', run: () => cursor.current >= 0 && toggle(issues[cursor.current]!.id) },
    { key: 'r', does: 'Resolve the selected issues (or this one)', run: () => targets().length && apply(targets(), { status: { status: 'resolved' } }) },
    { key: 'i', does: 'Ignore the selected issues (or this one)', run: () => targets().length && apply(targets(), { status: { status: 'ignored' } }) },
    { key: '/', does: 'Search', run: focusSearch },
  ]);
  const all = selected.size === issues.length;
  return (
    <>
      {help}
      <div class="bulk" role="group" aria-label="Selected issues">
        <span>{selected.size === 0 ? 'Select issues to change many at once' : `${selected.size} selected`}</span>
        {selected.size > 0 && (
          <>
            <button type="button" disabled={busy} onClick={() => apply([...selected], { status: { status: 'resolved' } })}>
              Resolve
            </button>
            <button type="button" disabled={busy} onClick={() => apply([...selected], { status: { status: 'resolved', in_next_release: true } })}>
              Resolve in next release
            </button>
            <button type="button" disabled={busy} onClick={() => apply([...selected], { status: { status: 'ignored' } })}>
              Ignore
            </button>
            {list.status !== 'unresolved' && (
              <button type="button" disabled={busy} onClick={() => apply([...selected], { status: { status: 'unresolved' } })}>
                Reopen
              </button>
            )}
            <label class="inline-label">
              Assign to{' '}
              <select
                value=""
                disabled={busy}
                onChange={(e) => e.currentTarget.value && apply([...selected], { assignee: e.currentTarget.value === '-' ? null : e.currentTarget.value })}
              >
                <option value="">Choose…</option>
                <option value="-">No one</option>
                {members.map((email) => (
                  <option key={email} value={email}>
                    {email}
                  </option>
                ))}
              </select>
            </label>
          </>
        )}
        <span class="muted">
          Keys: <kbd>?</kbd>
        </span>
      </div>
      {error && <Failure error={error} />}
      <div class="scroll" tabIndex={0}>
        <table class="issues">
          <caption class="sr-only">
            {list.status} issues, {totalWords(list)} in all
          </caption>
          <thead>
            <tr>
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select every issue on this page"
                  checked={all}
                  onChange={() => setSelected(all ? new Set() : new Set(issues.map((i) => i.id)))}
                />
              </th>
              <th scope="col">Issue</th>
              <th scope="col">{filtered ? 'Events (matching)' : 'Events'}</th>
              <th scope="col">Users</th>
              <th scope="col">Last 24 hours</th>
              <th scope="col">Seen</th>
              <th scope="col">Releases</th>
              <th scope="col">Assignee</th>
            </tr>
          </thead>
          <tbody>
            {issues.map((i, n) => (
              <IssueLine key={i.id} id={id} i={i} current={n === at} checked={selected.has(i.id)} toggle={() => toggle(i.id)} />
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function IssueLine({ id, i, current, checked, toggle }: { id: string; i: IssueRow; current: boolean; checked: boolean; toggle: () => void }) {
  return (
    <tr id={`issue-row-${i.id}`} class={current ? 'current' : undefined}>
      <td>
        <input type="checkbox" aria-label={`Select issue ${i.id}`} checked={checked} onChange={toggle} />
      </td>
      <td class="issue-cell">
        <a class="title" href={`/projects/${id}/issues/${i.id}`}>
          {i.title}
        </a>{' '}
        <span class="muted">#{i.id}</span> <IssueBadges i={i} />
        {i.culprit && (
          <div class="muted culprit">
            <code>{i.culprit}</code>
          </div>
        )}
        {(i.user_feedback > 0 || i.companies.length > 0) && (
          <div class="muted">
            {[i.user_feedback > 0 && `${count(i.user_feedback)} user feedback`, i.companies.length > 0 && i.companies.join(', ')].filter(Boolean).join(' · ')}
          </div>
        )}
      </td>
      <td class="num">
        {i.matching_events !== null ? (
          <span title={`${count(i.event_count)} in all`}>
            {count(i.matching_events)} <span class="muted">of {count(i.event_count)}</span>
          </span>
        ) : (
          count(i.event_count)
        )}
      </td>
      <td class="num">{count(i.users)}</td>
      <td>
        <Bars counts={i.events_24h} label={`${count(i.events_24h.reduce((a, b) => a + b, 0))} events in the last 24 hours`} />
      </td>
      <td>
        <Time at={i.last_seen} />
        <div class="muted">
          first <Time at={i.first_seen} />
        </div>
      </td>
      <td>
        <Releases id={id} first={i.first_release} last={i.last_release} />
      </td>
      <td>{i.assignee ?? <span class="muted">—</span>}</td>
    </tr>
  );
}

/** The first and the last release of an issue, each a link to its page. */
export function Releases({ id, first, last }: { id: string; first: string | null; last: string | null }) {
  if (!first && !last) return <span class="muted">—</span>;
  if (first === last || !first) return <a href={releaseHref(id, last!)}>{last}</a>;
  return (
    <>
      <a href={releaseHref(id, first)}>{first}</a> → {last ? <a href={releaseHref(id, last)}>{last}</a> : '—'}
    </>
  );
}

/** What an issue's status says at a glance: regressed, resolved until the next release, ignored until. */
export function IssueBadges({ i }: { i: IssueRow | (Omit<IssueRow, 'events_24h' | 'user_feedback' | 'users' | 'matching_events'> & object) }) {
  return (
    <>
      {i.kind !== 'error' && <span class="badge">{i.kind}</span>}
      {i.regressed && <span class="badge warn">Regressed</span>}
      {i.resolved_in_next_release && <span class="badge">Resolved in the release after {i.resolved_release ?? 'the current one'}</span>}
      {i.ignore_until_count !== null && <span class="badge">Ignored until {count(i.ignore_until_count)} events</span>}
      {i.ignore_until !== null && (
        <span class="badge">
          Ignored until <Time at={i.ignore_until} />
        </span>
      )}
    </>
  );
}
