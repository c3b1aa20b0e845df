/** The Projects page, and one project's settings: keys, switches and its binding. */
import { useState } from 'preact/hooks';
import { api, type Session } from '../api.ts';
import { count } from '../format.ts';
import type { Project, ProjectsHealth } from '../types.ts';
import { CopyText, Failure, OnceSecret, Rate, Show, Time, Title, useAction, useLoad } from '../ui.tsx';
import { Ingestion, SourceMaps } from './project-data.tsx';
import { LimitsForm } from './project-limits.tsx';

export function ProjectsPage({ session }: { session: Session }) {
  const loaded = useLoad(() => api<{ projects: Project[] }>('GET', '/projects'), 'projects');
  const health = useLoad(() => api<ProjectsHealth>('GET', '/projects/health'), 'projects-health');
  const healthOf = (id: string) => health.data?.projects.find((h) => h.id === id);
  return (
    <section>
      <Title>Projects</Title>
      <Show loaded={loaded}>
        {({ projects }) =>
          projects.length === 0 ? (
            <p>No project yet.</p>
          ) : (
            <div class="scroll" tabIndex={0}>
              <table>
                <caption class="sr-only">Projects of your organisation</caption>
                <thead>
                  <tr>
                    <th scope="col">Project</th>
                    <th scope="col">Open issues</th>
                    <th scope="col">Events (24 h)</th>
                    <th scope="col">Newest release</th>
                    <th scope="col">State</th>
                    <th scope="col">Security monitoring</th>
                    <th scope="col">Installation</th>
                    <th scope="col">Pages</th>
                  </tr>
                </thead>
                <tbody>
                  {projects.map((p) => (
                    <tr key={p.id}>
                      <td>
                        <a href={`/projects/${p.id}`}>{p.name}</a> <span class="muted">#{p.id}</span>
                      </td>
                      <Health id={p.id} h={healthOf(p.id)} />
                      <td>{p.enabled ? 'enabled' : 'disabled'}</td>
                      <td>{p.security_monitoring ? 'on' : 'off'}</td>
                      <td>{p.installation ? p.installation.base_url ?? p.installation.instance_id : <span class="muted">not bound</span>}</td>
                      <td class="links">
                        <a href={`/projects/${p.id}/releases`} aria-label={`Releases of ${p.name}`}>Releases</a>{' '}
                        <a href={`/projects/${p.id}/issues`} aria-label={`Issues of ${p.name}`}>Issues</a>{' '}
                        <a href={`/projects/${p.id}/alerts`} aria-label={`Alerts of ${p.name}`}>Alerts</a>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
      {session.role === 'owner' && <CreateProject onCreated={loaded.reload} />}
    </section>
  );
}

/** A project's health cells: open issues (a link to them), events in 24 hours, its newest release's crash-free rate. */
function Health({ id, h }: { id: string; h: ProjectsHealth['projects'][number] | undefined }) {
  if (!h) {
    return (
      <>
        <td class="muted">…</td>
        <td class="muted">…</td>
        <td class="muted">…</td>
      </>
    );
  }
  const newest = h.newest_release;
  return (
    <>
      <td class="num">
        <a href={`/projects/${id}/issues`}>{count(h.open_issues)}</a>
      </td>
      <td class="num">{count(h.events_24h)}</td>
      <td>
        {newest ? (
          <>
            <a href={`/projects/${id}/releases/${encodeURIComponent(newest.release)}?environment=${encodeURIComponent(newest.environment)}`}>{newest.release}</a>{' '}
            <span class="muted">({newest.environment})</span>: <Rate rate={newest.crash_free_sessions} threshold={99} /> crash-free
          </>
        ) : (
          <span class="muted">no sessions</span>
        )}
      </td>
    </>
  );
}

function CreateProject({ onCreated }: { onCreated(): void }) {
  const [name, setName] = useState('');
  const [monitoring, setMonitoring] = useState(true);
  const [created, setCreated] = useState<{ id: string; name: string; secret_key: string; public_key: string } | null>(null);
  const [act, error, busy] = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      setCreated(await api('POST', '/projects', { name, security_monitoring: monitoring }));
      setName('');
      onCreated();
    });
  };
  return (
    <section aria-labelledby="create-project">
      <h2 id="create-project">New project</h2>
      <form onSubmit={submit} class="inline">
        <label>
          Project name
          <input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label class="check">
          <input type="checkbox" checked={monitoring} onChange={(e) => setMonitoring(e.currentTarget.checked)} />
          Security monitoring
        </label>
        <button type="submit" disabled={busy}>
          Create project
        </button>
      </form>
      {error && <Failure error={error} />}
      {created && (
        <div>
          <p>
            Created <a href={`/projects/${created.id}`}>{created.name}</a> (project {created.id}); public key <code>{created.public_key}</code>.
          </p>
          <OnceSecret label="Secret key" value={created.secret_key} />
        </div>
      )}
    </section>
  );
}

export function ProjectSettingsPage({ id, session }: { id: string; session: Session }) {
  const loaded = useLoad(() => api<Project>('GET', `/projects/${id}`), `project:${id}`);
  const [secret, setSecret] = useState<string | null>(null);
  const [act, error, busy] = useAction();
  const owner = session.role === 'owner';
  const change = (confirmText: string | null, run: () => Promise<unknown>) => {
    if (confirmText && !confirm(confirmText)) return;
    void act(async () => {
      await run();
      loaded.reload();
    });
  };
  return (
    <Show loaded={loaded}>
      {(p) => (
        <section>
          <Title sub={<ProjectNav id={id} current="settings" />}>{`${p.name}: settings`}</Title>
          {!owner && <p class="muted">Only an owner changes keys, bindings and switches.</p>}
          {error && <Failure error={error} />}
          <h2>Keys</h2>
          <dl>
            <dt>Public key (sessions from browsers and apps)</dt>
            <dd>
              <code>{p.public_key}</code>
            </dd>
            <dt>DSN (any Sentry SDK: set it as the SDK's dsn)</dt>
            <dd>
              <CopyText label="DSN" value={dsnOf(p.public_key, id)} />
            </dd>
            <dt>Slug (what sentry-cli's --project names it by)</dt>
            <dd>
              <code>{p.slug ?? id}</code>
            </dd>
            <dt>Secret key (the installation)</dt>
            <dd class="muted">Shown once, when the project is created or the key rotated.</dd>
          </dl>
          {secret && <OnceSecret label="New secret key" value={secret} />}
          {owner && (
            <p class="actions">
              <button
                type="button"
                disabled={busy}
                onClick={() =>
                  change('Rotate the secret key? The installation stops working until it has the new key.', async () =>
                    setSecret((await api<{ secret_key: string }>('POST', `/projects/${id}/keys`, { kind: 'secret' })).secret_key),
                  )
                }
              >
                Rotate secret key
              </button>{' '}
              <button
                type="button"
                disabled={busy}
                onClick={() => change('Rotate the public key? Browsers and apps with the old key are refused.', () => api('POST', `/projects/${id}/keys`, { kind: 'public' }))}
              >
                Rotate public key
              </button>
            </p>
          )}

          <h2>Switches</h2>
          <dl>
            <dt>State</dt>
            <dd>{p.enabled ? 'Enabled: its keys are accepted' : 'Disabled: every key of the project is refused'}</dd>
            <dt>Security monitoring</dt>
            <dd>{p.security_monitoring ? 'On: sign-in bursts raise security issues' : 'Off'}</dd>
            <dt>Event retention</dt>
            <dd>
              {p.event_retention_days === null ? "The installation's default (EVENT_RETENTION_DAYS, 90 days unless set)" : `${p.event_retention_days} days`}: older error events
              and sign-in attempts are deleted; issues keep their counts
            </dd>
          </dl>
          {owner && (
            <p class="actions">
              <button
                type="button"
                disabled={busy}
                onClick={() => change(p.enabled ? 'Disable the project? Every request with its keys is refused.' : null, () => api('PATCH', `/projects/${id}`, { enabled: !p.enabled }))}
              >
                {p.enabled ? 'Disable project' : 'Enable project'}
              </button>{' '}
              <button type="button" disabled={busy} onClick={() => change(null, () => api('PATCH', `/projects/${id}`, { security_monitoring: !p.security_monitoring }))}>
                {p.security_monitoring ? 'Turn security monitoring off' : 'Turn security monitoring on'}
              </button>
            </p>
          )}
          {owner && <RetentionForm days={p.event_retention_days} busy={busy} save={(days) => change(null, () => api('PATCH', `/projects/${id}`, { event_retention_days: days }))} />}

          <LimitsForm project={p} owner={owner} busy={busy} save={(set) => change(null, () => api('PATCH', `/projects/${id}`, set))} />

          <Ingestion id={id} />

          <SourceMaps id={id} project={p} session={session} />

          <h2>Binding</h2>
          {p.installation ? (
            <>
              <dl class="binding">
                <dt>Instance id</dt>
                <dd>
                  <code>{p.installation.instance_id}</code>
                </dd>
                <dt>Base URL</dt>
                <dd>{p.installation.base_url ?? '—'}</dd>
                <dt>Platform</dt>
                <dd>
                  {p.installation.platform ?? '—'} {p.installation.platform_version ?? ''}
                </dd>
                <dt>Terms version</dt>
                <dd>{p.installation.terms_version ?? '—'}</dd>
                <dt>Accepted by</dt>
                <dd>{p.installation.accepted_by ?? '—'}</dd>
                <dt>Activated</dt>
                <dd><Time at={p.installation.activated_at} /></dd>
                <dt>Last activation</dt>
                <dd><Time at={p.installation.last_activated_at} /></dd>
              </dl>
              {owner && (
                <button
                  type="button"
                  disabled={busy}
                  onClick={() => change('Unbind this installation? It must activate again, and another installation may take the project.', () => api('POST', `/projects/${id}/unbind`))}
                >
                  Unbind
                </button>
              )}
            </>
          ) : (
            <p>Not bound: the first installation to activate with the secret key takes the project.</p>
          )}
        </section>
      )}
    </Show>
  );
}

/** The DSN a Sentry SDK reports to this project with: the public key at the address this dashboard is served from. */
export function dsnOf(publicKey: string, project: string): string {
  return `${location.protocol}//${publicKey}@${location.host}/${project}`;
}

/** The tabs of a project's pages. */
export function ProjectNav({ id, current }: { id: string; current: 'releases' | 'issues' | 'performance' | 'logs' | 'monitors' | 'alerts' | 'settings' }) {
  const tabs = [
    ['releases', 'Releases'],
    ['issues', 'Issues'],
    ['performance', 'Performance'],
    ['logs', 'Logs'],
    ['monitors', 'Monitors'],
    ['alerts', 'Alerts'],
    ['settings', 'Settings'],
  ] as const;
  return (
    <nav aria-label="Project pages" class="tabs">
      {tabs.map(([tab, label]) => (
        <a key={tab} href={tab === 'settings' ? `/projects/${id}` : `/projects/${id}/${tab}`} aria-current={tab === current ? 'page' : undefined}>
          {label}
        </a>
      ))}
    </nav>
  );
}

/** Days the project's events are kept: a number, or empty for the installation's default. */
function RetentionForm({ days, busy, save }: { days: number | null; busy: boolean; save: (days: number | null) => void }) {
  const [value, setValue] = useState(days === null ? '' : String(days));
  return (
    <form
      class="actions"
      onSubmit={(e) => {
        e.preventDefault();
        save(value.trim() === '' ? null : Number(value));
      }}
    >
      <label>
        Keep events for{' '}
        <input type="number" name="event_retention_days" min={1} max={3650} placeholder="default" value={value} onInput={(e) => setValue((e.target as HTMLInputElement).value)} /> days
      </label>{' '}
      <button type="submit" disabled={busy}>
        Save retention
      </button>
    </form>
  );
}
