/** The alerts page's notification channels: what each is told of, adding one (owners), and the deliveries log. */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { count } from '../format.ts';
import type { Channel, Delivery } from '../types.ts';
import { Failure, Listed, OnceSecret, Show, Time, useAction, useLoad } from '../ui.tsx';

const TRIGGERS: [name: string, label: string][] = [
  ['issue.created', 'New issue'],
  ['issue.regressed', 'Regression'],
  ['security.burst', 'Sign-in burst'],
  ['issue.frequency', 'Frequent issue'],
  ['release.crash_free', 'Crash-free rate drop'],
  ['security.csp', 'CSP violation'],
  ['decision.created', 'Decision made'],
  ['issue.assigned', 'Issue assigned'],
  ['project.spike', 'Spike held back'],
  ['monitor.failed', 'Monitor failed'],
  ['monitor.recovered', 'Monitor recovered'],
  ['installation.silent', 'Installation silent'],
  ['uptime.down', 'Site down'],
  ['uptime.up', 'Site up again'],
  ['certificate.expiring', 'Certificate expiring'],
  ['performance.regressed', 'Transactions slow or failing'],
  ['backup.failed', 'Scheduled backup failed'],
];
const LEVELS = ['debug', 'info', 'warning', 'error', 'fatal'];

/** A trigger in words ('issue.regressed' → 'Regression'); a test and a digest too. */
export function triggerWords(event: string): string {
  if (event === 'test') return 'Test';
  if (event === 'digest') return 'Digest';
  return TRIGGERS.find(([n]) => n === event)?.[1] ?? event;
}

export function Notifications({ id, owner }: { id: string; owner: boolean }) {
  const channels = useLoad(() => api<{ channels: Channel[] }>('GET', `/projects/${id}/channels`), `channels:${id}`);
  const deliveries = useLoad(() => api<{ deliveries: Delivery[] }>('GET', `/projects/${id}/deliveries`), `deliveries:${id}`);
  const [act, error, busy] = useAction();
  const [notice, setNotice] = useState('');
  const run = (what: string, method: 'POST' | 'DELETE', path: string) =>
    void act(async () => {
      await api(method, `/projects/${id}/channels/${path}`);
      setNotice(what);
      channels.reload();
      deliveries.reload();
    });
  return (
    <>
      <h2>Notifications</h2>
      <Show loaded={channels}>
        {({ channels: list }) => (
          <Listed
            label="Notification channels"
            empty="No channel yet: Lookout tells no one when an issue or an attack appears."
            heads={['Target', 'Triggers', 'Filters', 'State', ...(owner ? ['Actions'] : [])]}
            items={list}
            row={(c) => (
              <tr key={c.id} data-channel={c.id}>
                <td>{c.kind === 'webhook' ? `${c.url} (${c.format === 'slack' ? 'Slack-compatible' : 'JSON'})` : c.email}</td>
                <td>{c.on.map(triggerWords).join(', ')}</td>
                <td>
                  {[
                    c.environment && `environment ${c.environment}`,
                    c.level && `${c.level} and above`,
                    c.on.includes('release.crash_free') && `crash-free sessions under ${c.crash_free.threshold}% (at least ${count(c.crash_free.min_sessions)} sessions an hour)`,
                    c.on.includes('issue.frequency') && `more than ${count(c.frequency.count)} events in ${c.frequency.minutes} min`,
                    c.on.includes('performance.regressed') &&
                      `p95 over ${c.performance.p95_ms ?? '—'} ms or failures over ${c.performance.failure_rate ?? '—'}% in ${c.performance.window_minutes} min (at least ${count(c.performance.min_count)} transactions)`,
                  ]
                    .filter(Boolean)
                    .join(', ') || 'none'}
                </td>
                <td>
                  {c.paused ? (
                    <strong>
                      Paused <Time at={c.paused_at} />: ten deliveries in a row failed
                    </strong>
                  ) : (c.failures_in_a_row ?? 0) > 0 ? (
                    <strong>Failing: its last {count(c.failures_in_a_row!)} deliveries failed (ten pause it)</strong>
                  ) : (
                    'Active'
                  )}
                </td>
                {owner && (
                  <td class="actions">
                    {c.paused && (
                      <button type="button" disabled={busy} onClick={() => run('Resumed.', 'POST', `${c.id}/resume`)}>
                        Resume
                      </button>
                    )}{' '}
                    <button type="button" disabled={busy} onClick={() => run('A test notification is on its way; see the log below.', 'POST', `${c.id}/test`)}>
                      Send test
                    </button>{' '}
                    <button type="button" disabled={busy} onClick={() => run('Removed.', 'DELETE', c.id)}>
                      Remove
                    </button>
                  </td>
                )}
              </tr>
            )}
          />
        )}
      </Show>
      {error && <Failure error={error} />}
      {notice && <p role="status">{notice}</p>}
      {owner && <AddChannel id={id} onAdded={channels.reload} />}
      <h2>Deliveries</h2>
      <p>
        <button type="button" onClick={deliveries.reload}>
          Refresh
        </button>
      </p>
      <Show loaded={deliveries}>{({ deliveries: list }) => <DeliveriesLog id={id} list={list} channels={channels.data?.channels ?? []} />}</Show>
    </>
  );
}

function AddChannel({ id, onAdded }: { id: string; onAdded(): void }) {
  const [kind, setKind] = useState<'webhook' | 'email'>('webhook');
  const [secret, setSecret] = useState<string | null>(null);
  const [act, error, busy] = useAction();
  const add = (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const number = (name: string) => (text(name) === '' ? undefined : Number(text(name)));
    const body = {
      ...(kind === 'webhook' ? { webhook: text('target'), format: text('format') } : { email: text('target') }),
      on: TRIGGERS.map(([n]) => n).filter((n) => form.get(`on:${n}`)),
      environment: text('environment') || null,
      level: text('level') || null,
      frequency: { count: number('frequency_count'), minutes: number('frequency_minutes') },
      crash_free: { threshold: number('crash_free_threshold'), min_sessions: number('crash_free_sessions') },
      performance: { p95_ms: number('performance_p95'), failure_rate: number('performance_failures') },
    };
    void act(async () => {
      const added = await api<Channel & { secret?: string }>('POST', `/projects/${id}/channels`, body);
      setSecret(added.secret ?? null);
      (event.target as HTMLFormElement).reset();
      onAdded();
    });
  };
  return (
    <form onSubmit={add} aria-label="Add a channel">
      <h3>Add a channel</h3>
      {secret && <OnceSecret label="Signing secret" value={secret} kept="Your receiver checks X-Lookout-Signature with it (docs/api.md)." />}
      <fieldset>
        <legend>Where</legend>
        <label>
          Kind
          <select name="kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as 'webhook' | 'email')}>
            <option value="webhook">Webhook</option>
            <option value="email">Email</option>
          </select>
        </label>
        <label>
          {kind === 'webhook' ? 'URL' : 'Email address'}
          {kind === 'webhook' ? <input name="target" type="url" required /> : <input name="target" type="email" required />}
        </label>
        {kind === 'webhook' && (
          <label>
            Format
            <select name="format">
              <option value="json">JSON (signed)</option>
              <option value="slack">Slack-compatible (Slack, Mattermost, Discord)</option>
            </select>
          </label>
        )}
      </fieldset>
      <fieldset>
        <legend>Triggers</legend>
        {TRIGGERS.map(([name, label], i) => (
          <label key={name} class="check">
            <input type="checkbox" name={`on:${name}`} defaultChecked={i < 3} /> {label}
          </label>
        ))}
        <label>
          Frequent issue: more than
          <input name="frequency_count" type="number" min={1} placeholder="100" />
          <span class="hint">events in</span>
          <input name="frequency_minutes" type="number" min={1} max={60} placeholder="60" aria-label="minutes" />
          <span class="hint">minutes</span>
        </label>
        <label>
          Crash-free rate below (%)
          <input name="crash_free_threshold" type="number" min={0} max={100} step="0.01" placeholder="99" />
          <span class="hint">with at least</span>
          <input name="crash_free_sessions" type="number" min={1} placeholder="100" aria-label="sessions in the hour" />
          <span class="hint">sessions in the hour</span>
        </label>
        <label>
          Transactions slow: p95 over (ms)
          <input name="performance_p95" type="number" min={1} placeholder="1000" />
          <span class="hint">or failing over (%)</span>
          <input name="performance_failures" type="number" min={0} max={100} step="0.1" placeholder="5" aria-label="failure rate (%)" />
        </label>
      </fieldset>
      <fieldset>
        <legend>Filters</legend>
        <label>
          Environment
          <input name="environment" placeholder="any" />
        </label>
        <label>
          Level
          <select name="level">
            <option value="">any</option>
            {LEVELS.map((l) => (
              <option key={l} value={l}>{`${l} and above`}</option>
            ))}
          </select>
        </label>
      </fieldset>
      <p class="actions">
        <button type="submit" disabled={busy}>
          Add channel
        </button>
      </p>
      {error && <Failure error={error} />}
    </form>
  );
}


function DeliveriesLog({ id, list, channels }: { id: string; list: Delivery[]; channels: Channel[] }) {
  const channelOf = (c: string) => {
    const found = channels.find((ch) => ch.id === c);
    if (!found) return `channel ${c} (removed)`;
    return found.kind === 'email' ? (found.email ?? 'email') : `webhook ${found.url ?? ''}`;
  };
  return (
    <Listed
      label="Deliveries"
      empty="Nothing sent yet."
      heads={['When', 'Channel', 'Trigger', 'Issue', 'Status', 'Attempts']}
      items={list}
      row={(d) => (
        <tr key={d.id} data-delivery={d.id}>
          <td><Time at={d.created_at} /></td>
          <td>{channelOf(d.channel)}</td>
          <td>{triggerWords(d.event)}</td>
          <td>{d.issue ? <a href={`/projects/${id}/issues/${d.issue}`}>#{d.issue}</a> : '—'}</td>
          <td>
            {d.status === 'in_digest' ? 'in the next digest' : d.status === 'paused' ? 'not sent: the channel is paused' : d.status}
            {d.next_attempt_at && (
              <div class="muted">
                next try <Time at={d.next_attempt_at} />
              </div>
            )}
          </td>
          <td>
            {d.attempts_log.length === 0 ? (
              '0'
            ) : (
              <details>
                <summary>{`${d.attempts}: ${d.last_status ?? d.last_error ?? ''}`}</summary>
                <ol>
                  {d.attempts_log.map((a) => (
                    <li key={a.at}>
                      <Time at={a.at} />
                      {`: ${a.status ?? 'no answer'}${a.error ? `, ${a.error}` : ''}`}
                      {a.answer && <pre>{a.answer}</pre>}
                    </li>
                  ))}
                </ol>
              </details>
            )}
          </td>
        </tr>
      )}
    />
  );
}
