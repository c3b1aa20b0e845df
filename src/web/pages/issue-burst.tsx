/**
 * A sign-in burst's security issue, built for an investigation: its attempts per hour, the accounts tried and the
 * addresses they came from, its decisions (Lift for owners) and its latest attempts.
 */
import { api } from '../api.ts';
import { count } from '../format.ts';
import type { AttemptSummary, Issue, IssueDecision, IssueDetail, IssueRow } from '../types.ts';
import { Failure, Figures, Listed, Show, Time, useLoad } from '../ui.tsx';
import { decisionType, LiftButton, useLift } from './alerts.tsx';
import { AttemptsTable, EventPanel } from './issue-events.tsx';
import { PerHour, Spread } from './issue-spread.tsx';

/** The detectors that raise security issues from sign-in bursts (the issue's exception_type). */
export const DETECTORS: Record<string, string> = { brute_force: 'Brute force', credential_stuffing: 'Credential stuffing' };
export const isBurst = (i: Issue) => i.kind === 'security' && i.exception_type !== null && i.exception_type in DETECTORS;

/** A sign-in burst's issue, for an investigation: what it is, when, who and from where, what is done about it. */
export function BurstBody({ id, issue, i, event, owner }: { id: string; issue: string; i: IssueDetail; event: string | undefined; owner: boolean }) {
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
  const [lift, error, busy] = useLift(id, () => loaded.reload());
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

