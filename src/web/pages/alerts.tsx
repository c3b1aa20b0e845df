/**
 * The Alerts page: sign-in burst settings, previewed on the last 24 hours
 * before they are saved; the notification channels (added with the signing
 * secret shown once, tested, resumed after a pause, removed) and the
 * deliveries log with each attempt.
 */
import { useState } from 'preact/hooks';
import { api, type Session } from '../api.ts';
import { count } from '../format.ts';
import type { Alerts, Bouncer, Channel, Decision, Delivery, Project } from '../types.ts';
import { Failure, Listed, OnceSecret, Show, Time, Title, useAction, useLoad } from '../ui.tsx';
import { ProjectNav } from './projects.tsx';

interface Preview {
  attempts: number;
  current: { brute_force: number; credential_stuffing: number; decisions: number };
  proposed: { brute_force: number; credential_stuffing: number; decisions: number };
}

/** Each detector's decision type, as the form names it. */
const DETECTOR_TYPES: [detector: keyof Alerts['decision_types'], label: string][] = [
  ['brute_force', 'Brute-force decision'],
  ['credential_stuffing', 'Credential-stuffing decision'],
];

type NumberKey = 'threshold' | 'window_seconds' | 'cooldown_seconds' | 'stuffing_threshold' | 'decision_seconds';
const FIELDS: { key: NumberKey; label: string; hint: string; max: number; min?: number }[] = [
  { key: 'threshold', label: 'Brute-force threshold', hint: 'failed sign-ins of one actor from one address inside the window', max: 100_000 },
  { key: 'window_seconds', label: 'Window (seconds)', hint: 'how far back the attempts are counted', max: 2_592_000 },
  { key: 'cooldown_seconds', label: 'Quiet period (seconds)', hint: 'after an issue is raised, bursts add to it instead of raising another', max: 2_592_000 },
  { key: 'stuffing_threshold', label: 'Credential-stuffing threshold', hint: 'distinct actors failing from one address inside the window', max: 100_000 },
  {
    key: 'decision_seconds',
    label: 'Decision holds (seconds)',
    hint: 'how long the installation is told to act on a burst (block, delay, captcha); 0: no decisions',
    max: 2_592_000,
    min: 0,
  },
];

export function AlertsPage({ id, session }: { id: string; session: Session }) {
  const loaded = useLoad(() => api<Project>('GET', `/projects/${id}`), `project:${id}`);
  return (
    <Show loaded={loaded}>
      {(project) => (
        <section>
          <Title sub={<ProjectNav id={id} current="alerts" />}>{`${project.name}: alerts`}</Title>
          <h2>Sign-in bursts</h2>
          <AlertsForm id={id} saved={project.alerts} onSaved={loaded.reload} />
          <Decisions id={id} owner={session.role === 'owner'} />
          <Bouncers id={id} owner={session.role === 'owner'} />
          <Notifications id={id} owner={session.role === 'owner'} />
        </section>
      )}
    </Show>
  );
}

/** A decision's type, and how far it escalated. */
export const decisionType = (d: Pick<Decision, 'type' | 'escalation'>) => `${d.type}${d.escalation > 0 ? `, ×${2 ** d.escalation} (escalated)` : ''}`;

/** An owner's button that ends a decision now. */
export function LiftButton({ busy, lift }: { busy: boolean; lift(): void }) {
  return (
    <button type="button" disabled={busy} onClick={lift}>
      Lift
    </button>
  );
}

/** The active decisions the installation is acting on, each with a Lift button for owners. */
function Decisions({ id, owner }: { id: string; owner: boolean }) {
  const loaded = useLoad(() => api<{ decisions: Decision[] }>('GET', `/projects/${id}/decisions`), `decisions:${id}`);
  const [act, error, busy] = useAction();
  const lift = (decision: string) =>
    void act(async () => {
      await api('POST', `/projects/${id}/decisions/${decision}/lift`);
      loaded.reload();
    });
  return (
    <>
      <h2>Active decisions</h2>
      <Show loaded={loaded}>
        {({ decisions }) => (
          <Listed
            label="Active decisions"
            empty="None: no burst is being acted on."
            heads={['Kind', 'Type', 'Actor', 'Address', 'Made', 'Until', 'Issue', ...(owner ? ['Actions'] : [])]}
            items={decisions}
            row={(d) => (
              <tr key={d.id} data-decision={d.id}>
                <td>{d.kind === 'brute_force' ? 'Brute force' : 'Credential stuffing'}</td>
                <td>{decisionType(d)}</td>
                <td>{d.actor ?? 'any'}</td>
                <td>{d.ip ?? 'unknown'}</td>
                <td><Time at={d.created_at} /></td>
                <td><Time at={d.until} /></td>
                <td>
                  <a href={`/projects/${id}/issues/${d.issue_id}`}>{`#${d.issue_id}`}</a>
                </td>
                {owner && (
                  <td>
                    <LiftButton busy={busy} lift={() => lift(d.id)} />
                  </td>
                )}
              </tr>
            )}
          />
        )}
      </Show>
      {error && <Failure error={error} />}
    </>
  );
}

/**
 * The CrowdSec bouncers that pull the project's decisions (a reverse proxy's or a firewall's): each with its last pull,
 * so an owner sees which are alive; owners add one (its key shown once) and revoke one.
 */
function Bouncers({ id, owner }: { id: string; owner: boolean }) {
  const loaded = useLoad(() => api<{ bouncers: Bouncer[] }>('GET', `/projects/${id}/bouncers`), `bouncers:${id}`);
  const [act, error, busy] = useAction();
  const [added, setAdded] = useState<Bouncer | null>(null);
  const add = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const name = String(new FormData(form).get('name') ?? '').trim();
    void act(async () => {
      setAdded(await api<Bouncer>('POST', `/projects/${id}/bouncers`, { name }));
      form.reset();
      loaded.reload();
    });
  };
  const revoke = (b: Bouncer) => {
    if (!confirm(`Revoke ${b.name}? Its next pull is refused, and it stops acting on new decisions.`)) return;
    void act(async () => {
      await api('DELETE', `/projects/${id}/bouncers/${b.id}`);
      loaded.reload();
    });
  };
  return (
    <>
      <h2>CrowdSec bouncers</h2>
      <p class="muted">
        Any CrowdSec bouncer (nginx, Traefik, HAProxy, the firewall, a custom script) acts on these decisions: set its <code>api_url</code> to{' '}
        <code>{`${location.origin}/`}</code> and its <code>api_key</code> to a key made here. Decisions that name only an account reach only bouncers that ask
        for the <code>username</code> scope.
      </p>
      <Show loaded={loaded}>
        {({ bouncers }) => (
          <Listed
            label="CrowdSec bouncers"
            empty="No bouncer yet."
            heads={['Name', 'Key', 'Added', 'Last pull', 'From', 'Bouncer', ...(owner ? ['Actions'] : [])]}
            items={bouncers}
            row={(b) => (
              <tr key={b.id} data-bouncer={b.id}>
                <td>{b.name}</td>
                <td>
                  <code>{b.hint}</code>
                </td>
                <td><Time at={b.created_at} /></td>
                <td>{b.last_pull ? <Time at={b.last_pull.at} /> : 'never'}</td>
                <td>{b.last_pull?.ip ?? '—'}</td>
                <td>{b.last_pull?.user_agent || '—'}</td>
                {owner && (
                  <td>
                    <button type="button" disabled={busy} onClick={() => revoke(b)}>
                      Revoke
                    </button>
                  </td>
                )}
              </tr>
            )}
          />
        )}
      </Show>
      {error && <Failure error={error} />}
      {owner && (
        <form onSubmit={add} aria-label="Add a bouncer">
          {added?.key && <OnceSecret label="Bouncer key" value={added.key} kept={`Set it as the api_key of ${added.name}; Lookout keeps only its hash.`} />}
          <label>
            Name
            <input name="name" required maxLength={100} placeholder="edge-nginx" />
          </label>{' '}
          <button type="submit" disabled={busy}>
            Add bouncer
          </button>
        </form>
      )}
    </>
  );
}

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
];
const LEVELS = ['debug', 'info', 'warning', 'error', 'fatal'];

/** A trigger in words ('issue.regressed' → 'Regression'); a test and a digest too. */
export function triggerWords(event: string): string {
  if (event === 'test') return 'Test';
  if (event === 'digest') return 'Digest';
  return TRIGGERS.find(([n]) => n === event)?.[1] ?? event;
}

function Notifications({ id, owner }: { id: string; owner: boolean }) {
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

function AlertsForm({ id, saved, onSaved }: { id: string; saved: Alerts; onSaved(): void }) {
  const [values, setValues] = useState<Record<NumberKey, string>>(() => stringify(saved));
  const [policy, setPolicy] = useState(() => ({
    decision_mode: saved.decision_mode,
    allowlist: saved.allowlist.join('\n'),
    escalate: saved.escalate,
    decision_max_seconds: String(saved.decision_max_seconds),
    decision_types: saved.decision_types,
  }));
  const [preview, setPreview] = useState<Preview | null>(null);
  const [notice, setNotice] = useState('');
  const [act, error, busy] = useAction();
  const settings = (): Alerts => ({
    ...(Object.fromEntries(FIELDS.map((f) => [f.key, Number(values[f.key])])) as Record<NumberKey, number>),
    decision_mode: policy.decision_mode,
    allowlist: [
      ...new Set(
        policy.allowlist
          .split('\n')
          .map((e) => e.trim())
          .filter(Boolean),
      ),
    ],
    escalate: policy.escalate,
    decision_max_seconds: Number(policy.decision_max_seconds),
    decision_types: policy.decision_types,
  });
  const changed = () => {
    setPreview(null);
    setNotice('');
  };
  const edit = (key: NumberKey, value: string) => {
    setValues({ ...values, [key]: value });
    changed();
  };
  const editPolicy = (change: Partial<typeof policy>) => {
    setPolicy({ ...policy, ...change });
    changed();
  };
  const runPreview = () => void act(async () => setPreview(await api<Preview>('POST', `/projects/${id}/alerts/preview`, settings())));
  const save = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      await api('PUT', `/projects/${id}/alerts`, settings());
      setNotice('Saved: every API process and worker uses the new settings from now on.');
      onSaved();
    });
  };
  return (
    <form onSubmit={save}>
      {FIELDS.map((f) => (
        <label key={f.key}>
          {f.label}
          <input
            type="number"
            name={f.key}
            min={f.min ?? 1}
            max={f.max}
            step={1}
            required
            value={values[f.key]}
            onInput={(e) => edit(f.key, e.currentTarget.value)}
            aria-describedby={`${f.key}-hint`}
          />
          <span id={`${f.key}-hint`} class="hint">
            {f.hint}
          </span>
        </label>
      ))}
      <fieldset>
        <legend>Decisions</legend>
        <label>
          Mode
          <select
            name="decision_mode"
            value={policy.decision_mode}
            onChange={(e) => editPolicy({ decision_mode: e.currentTarget.value as Alerts['decision_mode'] })}
          >
            <option value="enforce">Make decisions</option>
            <option value="monitor">Monitor only: issues and notifications, no decisions</option>
          </select>
        </label>
        {DETECTOR_TYPES.map(([detector, label]) => (
          <label key={detector}>
            {label}
            <select
              name={`${detector}_type`}
              value={policy.decision_types[detector]}
              onChange={(e) => editPolicy({ decision_types: { ...policy.decision_types, [detector]: e.currentTarget.value as 'ban' | 'captcha' } })}
            >
              <option value="ban">Ban</option>
              <option value="captcha">Captcha</option>
            </select>
          </label>
        ))}
        <label class="check">
          <input type="checkbox" name="escalate" checked={policy.escalate} onChange={(e) => editPolicy({ escalate: e.currentTarget.checked })} />
          Escalate: a decision for an address that had one in the last 24 hours holds twice as long, each time
        </label>
        <label>
          Longest escalated decision (seconds)
          <input
            type="number"
            name="decision_max_seconds"
            min={1}
            max={31_536_000}
            step={1}
            required
            value={policy.decision_max_seconds}
            onInput={(e) => editPolicy({ decision_max_seconds: e.currentTarget.value })}
          />
        </label>
        <label>
          Allowlist
          <textarea
            name="allowlist"
            rows={4}
            value={policy.allowlist}
            onInput={(e) => editPolicy({ allowlist: e.currentTarget.value })}
            aria-describedby="allowlist-hint"
          />
          <span id="allowlist-hint" class="hint">
            one per line: addresses, CIDR ranges (192.0.2.0/24) and accounts that never get a decision; their bursts still raise issues, marked allowlisted
          </span>
        </label>
      </fieldset>
      <p class="actions">
        <button type="button" disabled={busy} onClick={runPreview}>
          Preview on the last 24 hours
        </button>{' '}
        <button type="submit" disabled={busy}>
          Save alerts
        </button>
      </p>
      {error && <Failure error={error} />}
      {notice && <p role="status">{notice}</p>}
      {preview && (
        <div role="status" class="preview">
          <p>From the {count(preview.attempts)} sign-in attempts of the last 24 hours:</p>
          <div class="scroll" tabIndex={0}>
            <table>
              <thead>
                <tr>
                  <th scope="col">Settings</th>
                  <th scope="col">Brute-force issues</th>
                  <th scope="col">Credential-stuffing issues</th>
                  <th scope="col">Decisions</th>
                </tr>
              </thead>
              <tbody>
                <tr>
                  <th scope="row">Saved now</th>
                  <td class="num">{preview.current.brute_force}</td>
                  <td class="num">{preview.current.credential_stuffing}</td>
                  <td class="num">{preview.current.decisions}</td>
                </tr>
                <tr>
                  <th scope="row">These settings</th>
                  <td class="num" data-preview="brute_force">
                    {preview.proposed.brute_force}
                  </td>
                  <td class="num" data-preview="credential_stuffing">
                    {preview.proposed.credential_stuffing}
                  </td>
                  <td class="num" data-preview="decisions">
                    {preview.proposed.decisions}
                  </td>
                </tr>
              </tbody>
            </table>
          </div>
        </div>
      )}
    </form>
  );
}

function stringify(alerts: Alerts): Record<NumberKey, string> {
  return Object.fromEntries(FIELDS.map((f) => [f.key, String(alerts[f.key])])) as Record<NumberKey, string>;
}
