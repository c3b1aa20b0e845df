/**
 * An issue, built for debugging: its status and figures, its events over
 * 24 hours or 14 days, where they come from (releases, environments,
 * companies), and one of its events in full with the newer and older one a
 * click away, each at a stable URL (./issue-events.tsx, with the page of
 * all its events). A sign-in burst's security issue is built for an
 * investigation instead (./issue-burst.tsx). Here: the page, its status
 * actions, assignment and activity, and an error issue's body.
 */
import { useState } from 'preact/hooks';
import { api, type Session } from '../api.ts';
import { count } from '../format.ts';
import { useShortcuts } from '../keys.tsx';
import { navigate } from '../router.ts';
import type { ActivityEntry, Issue, IssueActivity, IssueDetail, UserFeedback } from '../types.ts';
import { Failure, Figures, Show, Time, Title, useAction, useLoad } from '../ui.tsx';
import { triggerWords } from './notifications.tsx';
import { IssueBadges, Releases, useMembers } from './issues.tsx';
import { ProjectNav } from './projects.tsx';
import { BurstBody, isBurst } from './issue-burst.tsx';
import { EventPanel } from './issue-events.tsx';
import { PerHour, Spread } from './issue-spread.tsx';



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
