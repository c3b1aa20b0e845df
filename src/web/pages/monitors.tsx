/**
 * The Monitors page: each cron monitor's state per environment, its schedule and the next five runs it expects in
 * its own time zone (a wrong zone shows at once), and a monitor's page with its newest runs as a timeline. An owner
 * adds, pauses, resumes and removes monitors.
 */
import { useState } from 'preact/hooks';
import { api, type Session } from '../api.ts';
import { navigate } from '../router.ts';
import type { InstallationWatch, Monitor, MonitorRun } from '../types.ts';
import { Failure, Figures, Listed, Show, Time, Title, useChange, useLoad } from '../ui.tsx';
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
      <Installation id={id} />
    </section>
  );
}

/** The bound installation, watched with no set-up: what it reported, and when it was last heard from. */
function Installation({ id }: { id: string }) {
  const loaded = useLoad(() => api<InstallationWatch>('GET', `/projects/${id}/installation`), `installation:${id}`);
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
              <button
                class="danger"
                disabled={busy}
                onClick={() =>
                  confirm(`Remove ${m.name} and its runs?`) && change(async () => {
                    await api('DELETE', `/projects/${id}/monitors/${encodeURIComponent(slug)}`);
                    navigate(`/projects/${id}/monitors`);
                  })
                }
              >
                Remove
              </button>
            </p>
          )}
          {error && <Failure error={error} />}
        </section>
      )}
    </Show>
  );
}
