/**
 * An issue, built for debugging: its status and figures, its events over
 * 24 hours or 14 days, where they come from (releases, environments,
 * companies), and one of its events in full with the newer and older one a
 * click away, each at a stable URL; and the page of all its events.
 * A sign-in burst's security issue is built for an investigation instead:
 * its attempts per hour, the accounts tried and the addresses they came
 * from, its decisions (Lift for owners) and its latest attempts.
 */
import { useState } from 'preact/hooks';
import { api, type Session } from '../api.ts';
import { EventView } from '../event.tsx';
import { count, when } from '../format.ts';
import { useShortcuts } from '../keys.tsx';
import { navigate } from '../router.ts';
import type { ActivityEntry, AttemptSummary, Issue, IssueActivity, IssueDecision, IssueDetail, IssueEvent, IssueEventSummary, IssueRow, UserFeedback } from '../types.ts';
import { Bars, Failure, Figures, Listed, Show, Time, Title, useAction, useLoad } from '../ui.tsx';
import { decisionType, LiftButton, triggerWords } from './alerts.tsx';
import { IssueBadges, Releases, useMembers } from './issues.tsx';
import { ProjectNav } from './projects.tsx';

/** The detectors that raise security issues from sign-in bursts (the issue's exception_type). */
const DETECTORS: Record<string, string> = { brute_force: 'Brute force', credential_stuffing: 'Credential stuffing' };
const isBurst = (i: Issue) => i.kind === 'security' && i.exception_type !== null && i.exception_type in DETECTORS;

const EVENTS_PAGE = 25;

function Spread({ title, rows, of = 'Events' }: { title: string; rows: { value: string; count: number }[]; of?: string }) {
  return (
    <div class="spread">
      <h3>{title}</h3>
      {rows.length === 0 ? (
        <p class="muted">None sent.</p>
      ) : (
        <div class="scroll" tabIndex={0}>
          <table>
            <caption class="sr-only">
              {of} by {title.toLowerCase()}
            </caption>
            <tbody>
              {rows.map((r) => (
                <tr key={r.value}>
                  <th scope="row">{r.value}</th>
                  <td class="num">{count(r.count)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function PerHour({ hourly, what = 'events' }: { hourly: IssueDetail['hourly']; what?: 'events' | 'attempts' }) {
  const [span, setSpan] = useState<'24h' | '14d'>('24h');
  const counts = span === '24h' ? hourly.last_24h : hourly.last_14d;
  const total = counts.reduce((a, b) => a + b, 0);
  return (
    <section aria-labelledby="activity">
      <h2 id="activity">{what === 'events' ? 'Events' : 'Attempts'} per hour</h2>
      <div role="group" aria-label="Period" class="segmented">
        <button type="button" aria-pressed={span === '24h'} onClick={() => setSpan('24h')}>
          Last 24 hours
        </button>
        <button type="button" aria-pressed={span === '14d'} onClick={() => setSpan('14d')}>
          Last 14 days
        </button>
      </div>
      <Bars
        counts={counts}
        width={720}
        height={80}
        label={`${count(total)} ${what} in the ${span === '24h' ? 'last 24 hours' : 'last 14 days'}, one bar per hour`}
      />
      <p class="muted">
        {count(total)} {total === 1 ? what.slice(0, -1) : what}, one bar per hour up to {when(hourly.until)}.
      </p>
    </section>
  );
}

export function IssuePage({ id, issue, event, session }: { id: string; issue: string; event?: string; session: Session }) {
  const loaded = useLoad(() => api<IssueDetail>('GET', `/projects/${id}/issues/${issue}`), `issue:${id}:${issue}`);
  const [act, error, busy] = useAction();
  const [round, setRound] = useState(0);
  const change = (run: () => Promise<unknown>) =>
    void act(async () => {
      await run();
      loaded.reload();
      setRound((r) => r + 1);
    });
  const setStatus = (body: StatusChange) => change(() => api('POST', `/projects/${id}/issues/${issue}/status`, body));
  const help = useShortcuts([
    { key: 'r', does: 'Resolve', run: () => setStatus({ status: 'resolved' }) },
    { key: 'i', does: 'Ignore', run: () => setStatus({ status: 'ignored' }) },
    { key: 'u', does: 'Reopen (unresolve)', run: () => setStatus({ status: 'unresolved' }) },
    { key: 'j', does: 'Older event', run: () => document.querySelector<HTMLAnchorElement>('a[data-older]')?.click() },
    { key: 'k', does: 'Newer event', run: () => document.querySelector<HTMLAnchorElement>('a[data-newer]')?.click() },
    { key: 'o', does: 'All events', run: () => navigate(`/projects/${id}/issues/${issue}/events`) },
    { key: '/', does: 'Search the issues', run: () => navigate(`/projects/${id}/issues`) },
  ]);
  return (
    <Show loaded={loaded}>
      {(i) => (
        <section>
          {help}
          <Title sub={<ProjectNav id={id} current="issues" />}>{i.title}</Title>
          {i.culprit && (
            <p class="culprit">
              <code>{i.culprit}</code>
            </p>
          )}
          <div class="actions triage">
            <span class={`status status-${i.status}`}>{i.status}</span> <IssueBadges i={i} />{' '}
            {i.status !== 'resolved' && (
              <>
                <button type="button" disabled={busy} onClick={() => setStatus({ status: 'resolved' })}>
                  Resolve
                </button>{' '}
                <button type="button" disabled={busy} onClick={() => setStatus({ status: 'resolved', in_next_release: true })}>
                  Resolve in next release
                </button>
              </>
            )}{' '}
            {i.status !== 'ignored' && <IgnoreChoice busy={busy} ignore={setStatus} />}{' '}
            {i.status !== 'unresolved' && (
              <button type="button" disabled={busy} onClick={() => setStatus({ status: 'unresolved' })}>
                Unresolve
              </button>
            )}{' '}
            <Assignee current={i.assignee} busy={busy} assign={(assignee) => change(() => api('PUT', `/projects/${id}/issues/${issue}/assignee`, { assignee }))} />{' '}
            <span class="muted">
              Keys: <kbd>?</kbd>
            </span>
          </div>
          {error && <Failure error={error} />}
          {isBurst(i) ? (
            <BurstBody id={id} issue={issue} i={i} event={event} owner={session.role === 'owner'} />
          ) : (
            <ErrorBody id={id} issue={issue} i={i} event={event} />
          )}
          <ActivityLog id={id} issue={issue} round={round} />
        </section>
      )}
    </Show>
  );
}

type StatusChange = { status: Issue['status']; in_next_release?: boolean; until_count?: number; until?: string };

/** Ignore for good, until so many more events, or for a while. */
function IgnoreChoice({ busy, ignore }: { busy: boolean; ignore: (c: StatusChange) => void }) {
  const hours = (h: number) => new Date(Date.now() + h * 3_600_000).toISOString();
  const choices: [string, () => StatusChange][] = [
    ['for good', () => ({ status: 'ignored' })],
    ['until 10 more events', () => ({ status: 'ignored', until_count: 10 })],
    ['until 100 more events', () => ({ status: 'ignored', until_count: 100 })],
    ['for an hour', () => ({ status: 'ignored', until: hours(1) })],
    ['for a day', () => ({ status: 'ignored', until: hours(24) })],
    ['for a week', () => ({ status: 'ignored', until: hours(24 * 7) })],
  ];
  return (
    <label class="inline-label">
      Ignore{' '}
      <select value="" disabled={busy} onChange={(e) => e.currentTarget.value !== '' && ignore(choices[Number(e.currentTarget.value)]![1]())}>
        <option value="">Choose…</option>
        {choices.map(([label], n) => (
          <option key={label} value={n}>
            {label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Whom the issue is assigned to, chosen among the organisation's active members. */
function Assignee({ current, busy, assign }: { current: string | null; busy: boolean; assign: (email: string | null) => void }) {
  const members = useMembers();
  const emails = current && !members.includes(current) ? [...members, current] : members;
  return (
    <label class="inline-label">
      Assignee{' '}
      <select value={current ?? ''} disabled={busy} onChange={(e) => assign(e.currentTarget.value || null)}>
        <option value="">No one</option>
        {emails.map((email) => (
          <option key={email} value={email}>
            {email}
          </option>
        ))}
      </select>
    </label>
  );
}

/** What happened to the issue, newest first, with a comment form. */
function ActivityLog({ id, issue, round }: { id: string; issue: string; round: number }) {
  const loaded = useLoad(() => api<IssueActivity>('GET', `/projects/${id}/issues/${issue}/activity`), `activity:${id}:${issue}:${round}`);
  const [act, error, busy] = useAction();
  const [text, setText] = useState('');
  const submit = (e: Event) => {
    e.preventDefault();
    void act(async () => {
      await api('POST', `/projects/${id}/issues/${issue}/comments`, { text });
      setText('');
      loaded.reload();
    });
  };
  return (
    <section aria-labelledby="activity-log">
      <h2 id="activity-log">Activity</h2>
      <form onSubmit={submit}>
        <label for="comment">Comment (Markdown)</label>
        <textarea id="comment" rows={3} value={text} maxLength={10000} onInput={(e) => setText(e.currentTarget.value)} />
        <p>
          <button type="submit" disabled={busy || text.trim() === ''}>
            Comment
          </button>
        </p>
        {error && <Failure error={error} />}
      </form>
      <Show loaded={loaded}>
        {({ activity }) => (
          <ol class="activity">
            {activity.map((a) => (
              <li key={a.id}>
                <Time at={a.at} /> · {a.by !== null && (a.by === 'key' ? "The installation's key " : `${a.by} `)}
                <ActivityText a={a} />
              </li>
            ))}
          </ol>
        )}
      </Show>
    </section>
  );
}

function ActivityText({ a }: { a: ActivityEntry }) {
  const d = a.data as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  switch (a.kind) {
    case 'first_seen':
      return <>First seen{d.release ? ` in ${str(d.release)}` : ''}</>;
    case 'status': {
      const how = d.in_next_release ? ' in the next release' : d.until_count ? ` until ${count(Number(d.until_count))} more events` : d.until ? ' until a time' : '';
      return (
        <>
          set it {str(d.status)}
          {how}
          {d.until ? (
            <>
              {' '}
              (<Time at={str(d.until)} />)
            </>
          ) : null}
        </>
      );
    }
    case 'assigned':
      return <>{d.assignee ? `assigned it to ${str(d.assignee)}` : 'unassigned it'}</>;
    case 'comment':
      // rendered by the server from Markdown, raw HTML escaped (src/domain/markdown.ts)
      return (
        <>
          commented:
          <div class="comment" dangerouslySetInnerHTML={{ __html: str(d.html) }} />
        </>
      );
    case 'regressed':
      return <>Regressed{d.release ? ` in ${str(d.release)}` : ''}</>;
    case 'unignored':
      return <>No longer ignored, at {count(Number(d.event_count))} events</>;
    case 'notified':
      return (
        <>
          Told {str(d.channel)} ({triggerWords(str(d.event))})
        </>
      );
  }
}

/** An error issue: its figures, activity, where it happens, feedback and an event in full. */
function ErrorBody({ id, issue, i, event }: { id: string; issue: string; i: IssueDetail; event: string | undefined }) {
  return (
    <>
      <Figures
        items={[
          ['Events', count(i.event_count)],
          ['Users', count(i.users)],
          ['First seen', <Time at={i.first_seen} />],
          ['Last seen', <Time at={i.last_seen} />],
          ['Releases', <Releases id={id} first={i.first_release} last={i.last_release} />],
          ['Level', i.level ?? '—'],
          ['Regressions', <span data-field="regression_count">{i.regression_count}</span>],
          ['User feedback', count(i.user_feedback)],
        ]}
      />
      {i.last_regressed_at && (
        <p>
          Last regression <Time at={i.last_regressed_at} /> ({i.last_regression_kind === 'new_release' ? 'in a new release' : 'in the same release'}); resolved{' '}
          {i.resolved_count === 1 ? 'once' : i.resolved_count === 2 ? 'twice' : `${count(i.resolved_count)} times`}.
        </p>
      )}
      <PerHour hourly={i.hourly} />
      <section aria-labelledby="spread" class="spreads">
        <h2 id="spread">Where it happens</h2>
        <Spread title="Releases" rows={i.spread.releases} />
        <Spread title="Environments" rows={i.spread.environments} />
        <Spread title="Companies" rows={i.spread.companies} />
      </section>
      {i.spread.tags.length > 0 && (
        <section aria-labelledby="tags" class="spreads">
          <h2 id="tags">Tags</h2>
          {i.spread.tags.map((t) => (
            <Spread key={t.key} title={t.key} rows={t.values} />
          ))}
        </section>
      )}
      {i.user_feedback > 0 && <FeedbackList id={id} issue={issue} />}
      <EventPanel
        id={id}
        issue={issue}
        event={event ?? (i.latest_event as { event_id?: string } | null)?.event_id}
        total={i.event_count}
        expired={i.latest_event_expired}
      />
    </>
  );
}

/** A sign-in burst's issue, for an investigation: what it is, when, who and from where, what is done about it. */
function BurstBody({ id, issue, i, event, owner }: { id: string; issue: string; i: IssueDetail; event: string | undefined; owner: boolean }) {
  return (
    <>
      <Figures
        items={[
          ['Attempts', count(i.event_count)],
          ['Detector', DETECTORS[i.exception_type!]],
          ['First seen', <Time at={i.first_seen} />],
          ['Last seen', <Time at={i.last_seen} />],
          ['Regressions', <span data-field="regression_count">{i.regression_count}</span>],
        ]}
      />
      {i.policy && (
        <p class="note" data-field="policy">
          {i.policy === 'allowlisted'
            ? 'Allowlisted: its account or address is on the project’s allowlist, so this burst makes no decision.'
            : 'Monitoring only: the project raises issues and notifications but makes no decision (Alerts page).'}
        </p>
      )}
      <PerHour hourly={i.hourly} what="attempts" />
      <section aria-labelledby="who" class="spreads">
        <h2 id="who">Who and from where</h2>
        <Spread title={i.exception_type === 'credential_stuffing' ? 'Accounts tried' : 'Accounts'} rows={i.spread.actors} of="Attempts" />
        <Spread title="Addresses" rows={i.spread.addresses} of="Attempts" />
      </section>
      <BurstDecisions id={id} owner={owner} issue={issue} />
      <LatestAttempts id={id} issue={issue} />
      {i.spread.addresses.length > 0 && <SameAddress id={id} issue={issue} addresses={i.spread.addresses.map((a) => a.value)} />}
      {event && <EventPanel id={id} issue={issue} event={event} total={i.event_count} expired={false} />}
    </>
  );
}

const ENDED: Record<IssueDecision['state'], string> = {
  active: 'In force',
  lifted: 'Lifted',
  expired: 'Expired',
  resolved: 'Ended: issue resolved',
  ignored: 'Ended: issue ignored',
};

/** The burst's decisions, newest first: the one in force (with Lift for owners) and the ones that ended, each with its times. */
function BurstDecisions({ id, owner, issue }: { id: string; owner: boolean; issue: string }) {
  const loaded = useLoad(() => api<{ decisions: IssueDecision[] }>('GET', `/projects/${id}/issues/${issue}/decisions`), `issue-decisions:${id}:${issue}`);
  const [act, error, busy] = useAction();
  const lift = (decision: string) =>
    void act(async () => {
      await api('POST', `/projects/${id}/decisions/${decision}/lift`);
      loaded.reload();
    });
  return (
    <section aria-labelledby="decisions">
      <h2 id="decisions">Decisions</h2>
      <Show loaded={loaded}>
        {({ decisions }) => (
          <Listed
            label="Decisions"
            empty="None: this burst made no decision (decisions off, monitoring only, or allowlisted)."
            heads={['Scope', 'Value', 'Type', 'State', 'Made', 'Extended', 'Until', 'Ended', ...(owner ? ['Actions'] : [])]}
            items={decisions}
            row={(d) => (
              <tr key={d.id} data-decision={d.id} data-state={d.state}>
                <td>{d.ip ? (d.ip.includes('/') ? 'Range' : 'Address') : 'Account'}</td>
                <td>
                  <code>{d.ip ?? d.actor ?? 'unknown'}</code>
                  {d.ip && d.actor && <span class="muted">{` (account ${d.actor})`}</span>}
                </td>
                <td>{decisionType(d)}</td>
                <td>{ENDED[d.state]}</td>
                <td><Time at={d.created_at} /></td>
                <td>
                  {d.extended_at ? (
                    <>
                      <Time at={d.extended_at} />
                      {d.extensions && d.extensions > 1 ? ` (${d.extensions} times)` : ''}
                    </>
                  ) : (
                    '—'
                  )}
                </td>
                <td><Time at={d.until} /></td>
                <td>{d.ended_at ? <Time at={d.ended_at} /> : '—'}</td>
                {owner && <td>{d.state === 'active' && <LiftButton busy={busy} lift={() => lift(d.id)} />}</td>}
              </tr>
            )}
          />
        )}
      </Show>
      {error && <Failure error={error} />}
    </section>
  );
}

/**
 * Other open security issues from the burst's addresses: the list's search finds titles with the address's numbers,
 * and only titles naming the address itself are kept.
 */
function SameAddress({ id, issue, addresses }: { id: string; issue: string; addresses: string[] }) {
  const [first] = addresses;
  const loaded = useLoad(
    () => api<{ issues: IssueRow[] }>('GET', `/projects/${id}/issues?kind=security&limit=100&query=${encodeURIComponent(`"${first!}"`)}`),
    `same-address:${id}:${first}`,
  );
  return (
    <section aria-labelledby="same-address">
      <h2 id="same-address">Other open security issues from {first}</h2>
      <Show loaded={loaded}>
        {({ issues }) => {
          const others = issues.filter((o) => o.id !== issue && o.title.split(/\s+/).includes(first!));
          return others.length === 0 ? (
            <p class="muted">None.</p>
          ) : (
            <ul>
              {others.map((o) => (
                <li key={o.id}>
                  <a href={`/projects/${id}/issues/${o.id}`}>{o.title}</a>{' '}
                  <span class="muted">
                    ({count(o.event_count)} attempts, last <Time at={o.last_seen} />)
                  </span>
                </li>
              ))}
            </ul>
          );
        }}
      </Show>
    </section>
  );
}

/** The burst's latest attempts, newest first, each a link to the attempt in full. */
function LatestAttempts({ id, issue }: { id: string; issue: string }) {
  const base = `/projects/${id}/issues/${issue}`;
  const loaded = useLoad(() => api<{ events: AttemptSummary[]; total: number }>('GET', `${base}/events?limit=10`), `attempts:${id}:${issue}`);
  return (
    <section aria-labelledby="attempts">
      <h2 id="attempts">Latest attempts</h2>
      <Show loaded={loaded}>
        {({ events, total }) => (
          <>
            <AttemptsTable base={base} rows={events} />
            <p>
              <a href={`${base}/events`}>All {count(total)} attempts</a>
            </p>
          </>
        )}
      </Show>
    </section>
  );
}

function AttemptsTable({ base, rows }: { base: string; rows: AttemptSummary[] }) {
  return (
    <Listed
      label="Sign-in attempts, newest first"
      empty="No attempt stored."
      heads={['Time', 'Outcome', 'Account', 'Address', 'User agent']}
      items={rows}
      row={(a) => (
        <tr key={a.event_id}>
          <td>
            <a href={`${base}/events/${a.event_id}`}><Time at={a.timestamp} /></a>
          </td>
          <td>{a.outcome}</td>
          <td>{a.actor ?? '—'}</td>
          <td>{a.ip ?? '—'}</td>
          <td>{a.user_agent ?? '—'}</td>
        </tr>
      )}
    />
  );
}

/** What people wrote about the issue's errors (Sentry SDKs' user feedback), newest first. */
function FeedbackList({ id, issue }: { id: string; issue: string }) {
  const loaded = useLoad(
    () => api<{ feedback: UserFeedback[]; total: number }>('GET', `/projects/${id}/issues/${issue}/feedback?limit=25`),
    `feedback:${id}:${issue}`,
  );
  return (
    <section aria-labelledby="feedback">
      <h2 id="feedback">User feedback</h2>
      <Show loaded={loaded}>
        {(page) => (
          <>
            <ul class="feedback">
              {page.feedback.map((f) => (
                <li key={f.id}>
                  <blockquote>{f.comments}</blockquote>
                  <p class="muted">
                    {[f.name, f.email].filter(Boolean).join(' · ') || 'anonymous'}, <Time at={f.at} />
                    {f.event_id && (
                      <>
                        {' '}
                        on <a href={`/projects/${id}/issues/${issue}/events/${f.event_id}`}>event {f.event_id.slice(0, 8)}</a>
                      </>
                    )}
                    {f.url && <> from {f.url}</>}
                  </p>
                </li>
              ))}
            </ul>
            {page.total > page.feedback.length && <p class="muted">and {count(page.total - page.feedback.length)} more</p>}
          </>
        )}
      </Show>
    </section>
  );
}

function EventPanel({ id, issue, event, total, expired }: { id: string; issue: string; event: string | undefined; total: number; expired: boolean }) {
  const base = `/projects/${id}/issues/${issue}`;
  const loaded = useLoad(() => (event ? api<IssueEvent>('GET', `${base}/events/${event}`) : Promise.resolve(null)), `event:${id}:${issue}:${event}`);
  return (
    <section aria-labelledby="event-heading">
      <h2 id="event-heading">Event</h2>
      {!event ? (
        <p>{expired ? "Its latest event is past the project's event retention and was deleted; the issue keeps its counts." : 'No event stored.'}</p>
      ) : (
        <Show loaded={loaded}>
          {(e) =>
            e && (
              <>
                <nav aria-label="Events of this issue" class="pager">
                  {e.newer ? (
                    <a href={`${base}/events/${e.newer}`} data-newer>
                      Newer event
                    </a>
                  ) : (
                    <span class="muted">Newest event</span>
                  )}
                  <span>
                    {count(e.index + 1)} of {count(total)} · <a href={`${base}/events`}>All events</a>
                  </span>
                  {e.older ? (
                    <a href={`${base}/events/${e.older}`} data-older>
                      Older event
                    </a>
                  ) : (
                    <span class="muted">Oldest event</span>
                  )}
                </nav>
                {e.tags.length > 0 && (
                  <p class="event-tags">
                    {e.tags.map((t) => (
                      <span key={t.key} class="badge" title={t.key}>
                        {t.key}: {t.value}
                      </span>
                    ))}
                  </p>
                )}
                <EventView event={e.event as Record<string, unknown>} />
                {e.attachments.length > 0 && <Attachments base={`/api/dashboard${base}/events/${event}/attachments`} files={e.attachments} />}
              </>
            )
          }
        </Show>
      )}
    </section>
  );
}

/** The event's attachments: downloads of the ones kept, and a note of the ones over the event's cap. */
function Attachments({ base, files }: { base: string; files: IssueEvent['attachments'] }) {
  return (
    <section aria-labelledby="attachments">
      <h3 id="attachments">Attachments</h3>
      <ul>
        {files.map((f) => (
          <li key={f.slot}>
            {f.kept ? (
              <a href={`${base}/${f.slot}`} download={f.filename}>
                {f.filename}
              </a>
            ) : (
              <span>{f.filename}</span>
            )}{' '}
            <span class="muted">
              {bytes(f.size)}
              {f.content_type ? `, ${f.content_type}` : ''}
              {f.attachment_type !== 'event.attachment' ? `, ${f.attachment_type}` : ''}
              {!f.kept && ": not kept, over the event's attachment cap"}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}

const bytes = (n: number) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);

export function IssueEventsPage({ id, issue, query }: { id: string; issue: string; query: URLSearchParams }) {
  const page = Math.max(0, Number(query.get('page') ?? 0) | 0);
  const base = `/projects/${id}/issues/${issue}`;
  const loaded = useLoad(
    () => api<{ events: (IssueEventSummary | AttemptSummary)[]; total: number }>('GET', `${base}/events?limit=${EVENTS_PAGE}&offset=${page * EVENTS_PAGE}`),
    `events:${id}:${issue}:${page}`,
  );
  return (
    <section>
      <Title sub={<ProjectNav id={id} current="issues" />}>{`Events of issue ${issue}`}</Title>
      <p>
        <a href={base}>Back to the issue</a>
      </p>
      <Show loaded={loaded}>
        {({ events, total }) => (
          <>
            {events.some((e) => 'outcome' in e) ? (
              <AttemptsTable base={base} rows={events as AttemptSummary[]} />
            ) : (
              <div class="scroll" tabIndex={0}>
                <table>
                  <caption class="sr-only">The issue's events, newest first, {total} in all</caption>
                  <thead>
                    <tr>
                      <th scope="col">Time</th>
                      <th scope="col">Event</th>
                      <th scope="col">Release</th>
                      <th scope="col">Environment</th>
                      <th scope="col">User</th>
                      <th scope="col">Message</th>
                    </tr>
                  </thead>
                  <tbody>
                    {(events as IssueEventSummary[]).map((e) => (
                      <tr key={e.event_id}>
                        <td><Time at={e.timestamp} /></td>
                        <td>
                          <a href={`${base}/events/${e.event_id}`}>
                            <code>{e.event_id.slice(0, 12)}</code>
                          </a>
                        </td>
                        <td>{e.release ?? '—'}</td>
                        <td>{e.environment ?? '—'}</td>
                        <td>{e.user?.email ?? e.user?.username ?? e.user?.id ?? '—'}</td>
                        <td>{e.message ?? ''}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <nav aria-label="Pages" class="pager">
              {page > 0 ? <a href={`${base}/events?page=${page - 1}`}>Newer events</a> : <span />}
              <span>
                {page * EVENTS_PAGE + 1}–{page * EVENTS_PAGE + events.length} of {total}
              </span>
              {(page + 1) * EVENTS_PAGE < total ? <a href={`${base}/events?page=${page + 1}`}>Older events</a> : <span />}
            </nav>
          </>
        )}
      </Show>
    </section>
  );
}
