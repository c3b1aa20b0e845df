/** One of an issue's events in full, with the newer and older one a click away, and the page of all its events. */
import { api } from '../api.ts';
import { EventView } from '../event.tsx';
import { count } from '../format.ts';
import type { AttemptSummary, IssueEvent, IssueEventSummary } from '../types.ts';
import { Listed, Show, Time, Title, useLoad } from '../ui.tsx';
import { ProjectNav } from './projects.tsx';

export const EVENTS_PAGE = 25;

export function EventPanel({ id, issue, event, total, expired }: { id: string; issue: string; event: string | undefined; total: number; expired: boolean }) {
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
                <EventView event={e.event as Record<string, unknown>} project={id} />
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

export function AttemptsTable({ base, rows }: { base: string; rows: AttemptSummary[] }) {
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
