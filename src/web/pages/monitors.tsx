/**
 * The Monitors page: each cron monitor's state per environment, its schedule and the next five runs it expects in
 * its own time zone (a wrong zone shows at once), and a monitor's page with its newest runs as a timeline. An owner
 * adds, pauses, resumes and removes monitors.
 */
import { useState } from 'preact/hooks';
import { api, type Session } from '../api.ts';
import { navigate } from '../router.ts';
import type { InstallationWatch, Monitor, MonitorRun, Probe } from '../types.ts';
import { Bars, Failure, Figures, Listed, Show, Time, Title, useAction, useChange, useLoad } from '../ui.tsx';
import { ProjectNav } from './projects.tsx';

const STATUS_WORDS = { new: 'waiting for a first check-in', ok: 'up', error: 'failing' } as const;

function scheduleText(m: Monitor): string {
  const s = m.config.schedule;
  if (!s) return 'no schedule (never missed)';
  return s.type === 'crontab' ? `${s.value} (${m.config.timezone})` : `every ${s.value} ${s.unit}${s.value === 1 ? '' : 's'}`;
}

/** A run's time in the monitor's own zone, so the page shows what the crontab says. */
function zoned(at: string | number, timezone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: timezone, dateStyle: 'medium', timeStyle: 'short' }).format(new Date(at));
}

function StatusBadge({ m }: { m: Monitor }) {
  if (m.paused) return <span class="badge">paused</span>;
  const worst = m.environments.some((e) => e.state.status === 'error') ? 'error' : m.environments.some((e) => e.state.status === 'ok') ? 'ok' : 'new';
  return <span class={`badge status-${worst}`}>{STATUS_WORDS[worst]}</span>;
}

export function MonitorsPage({ id, session }: { id: string; session: Session }) {
  const loaded = useLoad(() => api<{ monitors: Monitor[] }>('GET', `/projects/${id}/monitors`), `monitors:${id}`);
  return (
    <section>
      <Title sub={<ProjectNav id={id} current="monitors" />}>Monitors</Title>
      <Show loaded={loaded}>
        {({ monitors }) => (
          <Listed
            label="Cron monitors"
            empty="No monitors yet. A job that checks in (Sentry.withMonitor, sentry-cli monitors run, or curl to /api/<project>/cron/<slug>/<public key>/) makes its own; an owner can add one below."
            heads={['Monitor', 'State', 'Schedule', 'Last check-in', 'Next expected']}
            items={monitors}
            row={(m) => {
              const last = Math.max(0, ...m.environments.map((e) => e.state.last_checkin ?? 0));
              return (
                <tr key={m.slug}>
                  <th scope="row">
                    <a href={`/projects/${id}/monitors/${encodeURIComponent(m.slug)}`}>{m.name}</a>
                  </th>
                  <td>
                    <StatusBadge m={m} />
                  </td>
                  <td>{scheduleText(m)}</td>
                  <td>{last ? <Time at={new Date(last).toISOString()} /> : '—'}</td>
                  <td>{m.next_runs[0] ? zoned(m.next_runs[0], m.config.timezone) : '—'}</td>
                </tr>
              );
            }}
          />
        )}
      </Show>
      {session.role === 'owner' && <AddMonitor id={id} onAdded={loaded.reload} />}
      <Probes id={id} owner={session.role === 'owner'} />
      <Installation id={id} owner={session.role === 'owner'} />
    </section>
  );
}

/**
 * The bound installation, watched with no set-up: what it reported, and when it was last heard from. Its address
 * belongs to the customer, so it is probed only when an owner asks (one click).
 */
function Installation({ id, owner }: { id: string; owner: boolean }) {
  const loaded = useLoad(() => api<InstallationWatch>('GET', `/projects/${id}/installation`), `installation:${id}`);
  const [probe, probeError, probing] = useAction();
  const [probed, setProbed] = useState(false);
  return (
    <section aria-labelledby="installation">
      <h2 id="installation">Installation</h2>
      <Show loaded={loaded}>
        {({ installation: i }) =>
          i ? (
            <>
              <p>
                {i.silent_since ? (
                  <span class="badge status-error">silent</span>
                ) : (
                  <span class="badge status-ok">heard</span>
                )}{' '}
                {i.instance_id}: reported silent after {i.silent_after_minutes} minutes without a configuration poll or a request (a project setting).
              </p>
              <Figures
                items={[
                  ['Last poll', <Time at={i.last_poll} />],
                  ['Last request', <Time at={i.last_request} />],
                  ['Address', i.base_url ?? '—'],
                  ['Platform', [i.platform, i.platform_version].filter(Boolean).join(' ') || '—'],
                  ['Terms', i.terms_version ?? '—'],
                  ['SDK', i.sdk ?? '—'],
                ]}
              />
              {owner && i.base_url && !probed && (
                <p class="actions">
                  <button
                    disabled={probing}
                    onClick={() =>
                      void probe(async () => {
                        await api('POST', `/projects/${id}/probes`, { url: i.base_url });
                        setProbed(true);
                      })
                    }
                  >
                    Probe {i.base_url} every 5 minutes
                  </button>
                </p>
              )}
              {probed && <p role="status">A probe of {i.base_url} was added; see Uptime above after a reload.</p>}
              {probeError && <Failure error={probeError} />}
            </>
          ) : (
            <p class="muted">No installation is bound to this project.</p>
          )
        }
      </Show>
    </section>
  );
}

function AddMonitor({ id, onAdded }: { id: string; onAdded: () => void }) {
  const [slug, setSlug] = useState('');
  const [schedule, setSchedule] = useState('');
  const [timezone, setTimezone] = useState('UTC');
  const [change, error, busy] = useChange(onAdded);
  return (
    <form
      class="actions"
      onSubmit={(e) => {
        e.preventDefault();
        change(() => api('PUT', `/projects/${id}/monitors`, { slug, config: { schedule: schedule ? { type: 'crontab', value: schedule } : null, timezone } }));
      }}
    >
      <h2>Add a monitor</h2>
      <label>
        Slug <input required value={slug} onInput={(e) => setSlug(e.currentTarget.value)} />
      </label>
      <label>
        Crontab <input placeholder="0 3 * * *" value={schedule} onInput={(e) => setSchedule(e.currentTarget.value)} />
      </label>
      <label>
        Time zone <input value={timezone} onInput={(e) => setTimezone(e.currentTarget.value)} />
      </label>
      <button disabled={busy}>Add</button>
      {error && <Failure error={error} />}
    </form>
  );
}

const RUN_WORDS: Record<MonitorRun['status'], string> = { in_progress: 'running', ok: 'ok', error: 'error', missed: 'missed', timeout: 'timed out', unknown: 'unknown' };

export function MonitorPage({ id, slug, session }: { id: string; slug: string; session: Session }) {
  const loaded = useLoad(() => api<Monitor>('GET', `/projects/${id}/monitors/${encodeURIComponent(slug)}`), `monitor:${id}:${slug}`);
  const [change, error, busy] = useChange(loaded.reload);
  const owner = session.role === 'owner';
  return (
    <Show loaded={loaded}>
      {(m) => (
        <section>
          <Title sub={<ProjectNav id={id} current="monitors" />}>{m.name}</Title>
          <p>
            <StatusBadge m={m} /> {scheduleText(m)}; margin {m.config.checkin_margin} min, maximum run {m.config.max_runtime} min; an issue after {m.config.failure_issue_threshold} failure
            {m.config.failure_issue_threshold === 1 ? '' : 's'} in a row, resolved after {m.config.recovery_threshold} ok.
          </p>
          <h2>Next runs ({m.config.timezone})</h2>
          {m.next_runs.length ? (
            <ol>
              {m.next_runs.map((r) => (
                <li key={r}>{zoned(r, m.config.timezone)}</li>
              ))}
            </ol>
          ) : (
            <p class="muted">No schedule: nothing is expected, so nothing is missed.</p>
          )}
          {m.environments.map((e) => (
            <section key={e.environment} aria-labelledby={`env-${e.environment}`}>
              <h2 id={`env-${e.environment}`}>
                {e.environment}: {STATUS_WORDS[e.state.status]}
              </h2>
              <ol class="timeline" aria-label={`Runs in ${e.environment}, oldest first`}>
                {[...(e.runs ?? [])].reverse().map((r) => (
                  <li key={r.id} class={`run run-${r.status}`} title={`${RUN_WORDS[r.status]} · ${zoned(r.started, m.config.timezone)}`}>
                    <span class="sr-only">
                      {RUN_WORDS[r.status]} at {zoned(r.started, m.config.timezone)}
                    </span>
                  </li>
                ))}
              </ol>
              <Listed
                label={`Newest runs in ${e.environment}`}
                empty="No runs yet."
                heads={['Started', 'Result', 'Duration']}
                items={(e.runs ?? []).slice(0, 20)}
                row={(r) => (
                  <tr key={r.id}>
                    <td>{zoned(r.started, m.config.timezone)}</td>
                    <td>{RUN_WORDS[r.status]}</td>
                    <td>{r.duration_ms === null || r.duration_ms === undefined ? '—' : `${(r.duration_ms / 1000).toFixed(1)} s`}</td>
                  </tr>
                )}
              />
            </section>
          ))}
          {owner && (
            <p class="actions">
              <button disabled={busy} onClick={() => change(() => api('POST', `/projects/${id}/monitors/${encodeURIComponent(slug)}/${m.paused ? 'resume' : 'pause'}`))}>
                {m.paused ? 'Resume' : 'Pause'}
              </button>
              <RemoveButton question={`Remove ${m.name} and its runs?`} path={`/projects/${id}/monitors/${encodeURIComponent(slug)}`} back={`/projects/${id}/monitors`} change={change} busy={busy} />
            </p>
          )}
          {error && <Failure error={error} />}
        </section>
      )}
    </Show>
  );
}

const PROBE_WORDS = { new: 'not checked yet', up: 'up', down: 'down' } as const;
const share = (rate: number | null | undefined) => (rate === null || rate === undefined ? '—' : `${Number((rate * 100).toFixed(2))}%`);

/** Uptime probes: each URL's state; an owner adds one. */
function Probes({ id, owner }: { id: string; owner: boolean }) {
  const loaded = useLoad(() => api<{ probes: Probe[] }>('GET', `/projects/${id}/probes`), `probes:${id}`);
  const [url, setUrl] = useState('');
  const [every, setEvery] = useState('5');
  const [change, error, busy] = useChange(loaded.reload);
  return (
    <section aria-labelledby="probes">
      <h2 id="probes">Uptime</h2>
      <Show loaded={loaded}>
        {({ probes }) => (
          <Listed
            label="Uptime probes"
            empty="No probe yet."
            heads={['URL', 'State', 'Every']}
            items={probes}
            row={(p) => (
              <tr key={p.id}>
                <th scope="row">
                  <a href={`/projects/${id}/probes/${p.id}`}>{p.url}</a>
                </th>
                <td>
                  <span class={`badge status-${p.state.status === 'down' ? 'error' : p.state.status === 'up' ? 'ok' : 'new'}`}>{PROBE_WORDS[p.state.status]}</span>
                </td>
                <td>{p.interval_min} min</td>
              </tr>
            )}
          />
        )}
      </Show>
      {owner && (
        <form
          class="actions"
          onSubmit={(e) => {
            e.preventDefault();
            change(() => api('POST', `/projects/${id}/probes`, { url, interval_min: Number(every) }));
          }}
        >
          <label>
            URL to check <input type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
          </label>
          <label>
            Every (minutes) <input type="number" min={1} max={60} value={every} onInput={(e) => setEvery(e.currentTarget.value)} />
          </label>
          <button disabled={busy}>Add probe</button>
          {error && <Failure error={error} />}
        </form>
      )}
    </section>
  );
}

/** A probe's page: its uptime over 24 hours, 7 and 30 days, its latency, and its newest checks with their reasons. */
export function ProbePage({ id, probe, session }: { id: string; probe: string; session: Session }) {
  const loaded = useLoad(() => api<Probe>('GET', `/projects/${id}/probes/${probe}`), `probe:${id}:${probe}`);
  const [change, error, busy] = useChange(loaded.reload);
  return (
    <Show loaded={loaded}>
      {(p) => {
        const results = p.results ?? [];
        return (
          <section>
            <Title sub={<ProjectNav id={id} current="monitors" />}>{`Uptime of ${p.url}`}</Title>
            <Figures
              items={[
                ['State', PROBE_WORDS[p.state.status]],
                ['24 hours', share(p.uptime?.day)],
                ['7 days', share(p.uptime?.week)],
                ['30 days', share(p.uptime?.month)],
              ]}
            />
            <h2>Latency</h2>
            <Bars counts={results.slice(-120).map((r) => r.latency_ms)} label={`Latency of the last ${Math.min(120, results.length)} checks, oldest first`} width={480} height={60} />
            <Listed
              label="Newest checks"
              empty="Not checked yet."
              heads={['When', 'Result', 'Status', 'Latency']}
              items={results.slice(-20).reverse()}
              row={(r) => (
                <tr key={r.at}>
                  <td>
                    <Time at={new Date(r.at).toISOString()} />
                  </td>
                  <td>{r.ok ? 'up' : `down: ${r.reason}`}</td>
                  <td>{r.status ?? '—'}</td>
                  <td>{r.latency_ms} ms</td>
                </tr>
              )}
            />
            {session.role === 'owner' && (
              <p class="actions">
                <RemoveButton question={`Remove the probe of ${p.url}?`} path={`/projects/${id}/probes/${probe}`} back={`/projects/${id}/monitors`} change={change} busy={busy} />
              </p>
            )}
            {error && <Failure error={error} />}
          </section>
        );
      }}
    </Show>
  );
}

/** An owner's button that removes what `path` names, once confirmed, then goes `back`. */
function RemoveButton({ question, path, back, change, busy }: { question: string; path: string; back: string; change: (run: () => Promise<unknown>) => void; busy: boolean }) {
  return (
    <button
      class="danger"
      disabled={busy}
      onClick={() =>
        confirm(question) &&
        change(async () => {
          await api('DELETE', path);
          navigate(back);
        })
      }
    >
      Remove
    </button>
  );
}
