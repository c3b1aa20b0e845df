/**
 * The Alerts page: sign-in burst settings, previewed on the last 24 hours
 * before they are saved; the notification channels (added with the signing
 * secret shown once, tested, resumed after a pause, removed) and the
 * deliveries log with each attempt.
 */
import { useState } from 'preact/hooks';
import { api, type Session } from '../api.ts';
import { count } from '../format.ts';
import type { Alerts, AlertsPreview as Preview, Bouncer, Decision, Project } from '../types.ts';
import { Failure, Listed, OnceSecret, Show, Time, Title, useAction, useLoad } from '../ui.tsx';
import { ProjectNav } from './projects.tsx';
import { Notifications } from './notifications.tsx';

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

/** Lifting a project's decisions (owners), then `reload`: the action, its error and whether one is under way. */
export function useLift(id: string, reload: () => void): [(decision: string) => void, Error | null, boolean] {
  const [act, error, busy] = useAction();
  const lift = (decision: string) =>
    void act(async () => {
      await api('POST', `/projects/${id}/decisions/${decision}/lift`);
      reload();
    });
  return [lift, error, busy];
}

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
  const [lift, error, busy] = useLift(id, () => loaded.reload());
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
