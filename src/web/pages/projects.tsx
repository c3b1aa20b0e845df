/** The Projects page, and one project's settings: keys, switches and its binding. */
import { useState } from 'preact/hooks';
import { api, type Session } from '../api.ts';
import { count } from '../format.ts';
import type { IngestCounts, Project, ProjectsHealth, SourcemapBundles } from '../types.ts';
import { CopyText, Failure, Figures, Listed, OnceSecret, Rate, Show, Time, Title, useAction, useLoad } from '../ui.tsx';

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

const sizeText = (bytes: number) =>
  bytes < 1024 * 1024 ? `${count(Math.ceil(bytes / 1024))} KB` : bytes < 1024 ** 3 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${(bytes / 1024 ** 3).toFixed(1)} GB`;

/**
 * Settings → Source maps: how to upload with sentry-cli (the lines of a .sentryclirc), and the bundles uploaded,
 * each with its files, which a member may delete.
 */
function SourceMaps({ id, project, session }: { id: string; project: Project; session: Session }) {
  const bundles = useLoad(() => api<SourcemapBundles>('GET', `/projects/${id}/sourcemaps`), `sourcemaps:${id}`);
  const org = useLoad(() => api<{ slug: string | null }>('GET', '/org'), 'org');
  const [act, error, busy] = useAction();
  const rc = `[defaults]\nurl=${location.origin}\norg=${org.data?.slug ?? session.org}\nproject=${project.slug ?? id}\n\n[auth]\ntoken=<an API token with the project:releases scope>`;
  const remove = (bundle: string) => {
    if (!confirm('Delete this bundle? Events that arrive later are no longer mapped by its maps.')) return;
    void act(async () => {
      await api('DELETE', `/projects/${id}/sourcemaps/${encodeURIComponent(bundle)}`);
      bundles.reload();
    });
  };
  return (
    <>
      <h2>Source maps</h2>
      <p>
        Minified JavaScript is mapped back to its source with the maps <code>sentry-cli</code> uploads (and the bundler plugins built on it). Put these
        lines in <code>.sentryclirc</code> (the token from your Account page), then run <code>sentry-cli sourcemaps inject dist</code> and{' '}
        <code>sentry-cli sourcemaps upload dist</code> after each build:
      </p>
      <CopyText label=".sentryclirc" value={rc} block />
      {error && <Failure error={error} />}
      <Show loaded={bundles}>
        {(b) =>
          b.bundles.length === 0 ? (
            <p class="muted">No source maps uploaded yet: browser events keep their minified frames, each saying why.</p>
          ) : (
            <>
              <Listed
                label="Source map bundles, newest first"
                empty=""
                heads={['Uploaded', 'Release', 'Files', 'Size', 'Action']}
                items={b.bundles}
                row={(bundle) => (
                  <tr key={bundle.id} data-bundle={bundle.id}>
                    <td><Time at={bundle.uploaded_at} /></td>
                    <td>{bundle.release ? `${bundle.release}${bundle.dist ? ` (${bundle.dist})` : ''}` : <span class="muted">by debug ID</span>}</td>
                    <td>
                      <details>
                        <summary>{count(bundle.files.length)} files</summary>
                        <ul>
                          {bundle.files.map((f) => (
                            <li key={f.url + f.type}>
                              <code>{f.url}</code> {f.type.replace('_', ' ')}, {sizeText(f.size)}
                              {f.debug_id && <span class="muted"> (debug ID {f.debug_id})</span>}
                            </li>
                          ))}
                        </ul>
                      </details>
                    </td>
                    <td>{sizeText(bundle.size)}</td>
                    <td>
                      <button type="button" disabled={busy} onClick={() => remove(bundle.id)}>
                        Delete
                      </button>
                    </td>
                  </tr>
                )}
              />
              <p class="muted">
                {sizeText(b.total_size)} of {sizeText(b.limit)} kept; past it the oldest bundles are deleted.
              </p>
            </>
          )
        }
      </Show>
    </>
  );
}

/** Settings → Ingestion: what the project's ingestion accepted and dropped, by type and reason. */
function Ingestion({ id }: { id: string }) {
  const [range, setRange] = useState<'24h' | '14d'>('24h');
  const loaded = useLoad(() => api<IngestCounts>('GET', `/projects/${id}/ingestion?range=${range}`), `ingestion:${id}:${range}`);
  return (
    <>
      <h2 id="ingestion">Ingestion</h2>
      <p class="actions">
        {(['24h', '14d'] as const).map((r) => (
          <button key={r} type="button" aria-pressed={r === range} onClick={() => setRange(r)}>
            {r === '24h' ? 'Last 24 hours' : 'Last 14 days'}
          </button>
        ))}
      </p>
      <Show loaded={loaded}>
        {(c) => {
          const accepted = Object.entries(c.accepted).sort((a, b) => b[1] - a[1]);
          const dropped = c.dropped.reduce((n, d) => n + d.count, 0);
          return (
            <>
              {c.spike && (
                <p class="notice" role="status">
                  Spike protection holds this project since <Time at={c.spike.since} />: error events far above its usual rate, {(c.spike.ceiling_per_10s * 6).toLocaleString()} a
                  minute taken, {c.spike.refused.toLocaleString()} refused so far (until ten minutes after the last refusal).
                </p>
              )}
              <Figures items={[['Accepted', accepted.reduce((n, [, v]) => n + v, 0).toLocaleString()], ['Dropped', dropped.toLocaleString()]]} />
              <div class="scroll" tabIndex={0}>
                <table aria-label="Accepted by type">
                  <thead>
                    <tr>
                      <th scope="col">Accepted</th>
                      <th scope="col" class="num">Items</th>
                    </tr>
                  </thead>
                  <tbody>
                    {accepted.length === 0 && (
                      <tr>
                        <td colSpan={2} class="muted">
                          Nothing received in this range.
                        </td>
                      </tr>
                    )}
                    {accepted.map(([type, n]) => (
                      <tr key={type}>
                        <td>{type}</td>
                        <td class="num">{n.toLocaleString()}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <div class="scroll" tabIndex={0}>
                <table aria-label="Dropped by type and reason">
                  <thead>
                    <tr>
                      <th scope="col">Dropped</th>
                      <th scope="col">Reason</th>
                      <th scope="col" class="num">Items</th>
                    </tr>
                  </thead>
                  <tbody>
                    {c.dropped.length === 0 && (
                      <tr>
                        <td colSpan={3} class="muted">
                          Nothing dropped in this range.
                        </td>
                      </tr>
                    )}
                    {c.dropped.map((d) => (
                      <tr key={`${d.type} ${d.reason}`}>
                        <td>{d.type}</td>
                        <td>{DROP_REASON_TEXT[d.reason] ?? (d.reason.startsWith('client_') ? `discarded by the SDK (${d.reason.slice(7)})` : d.reason)}</td>
                        <td class="num">{d.count.toLocaleString()}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          );
        }}
      </Show>
    </>
  );
}

/** What each reason an item was dropped for means, for people. */
const DROP_REASON_TEXT: Record<string, string> = {
  not_kept: 'a kind of item Lookout does not keep',
  invalid: 'broke a rule (nothing in it could be used)',
  too_large: 'over the size limit',
  duplicate: 'sent before (counted once)',
  filtered: 'filtered at the door',
  rate_limited: 'over the rate limit',
  security_monitoring_disabled: 'security monitoring is off',
  too_many_kinds: 'too many kinds in one hour',
  client_gone: 'its sender gave up before it was written',
  quota_minute: "over the project's quota per minute",
  quota_hour: "over the project's quota per hour",
  quota_month: "over the project's quota per month",
  spike: 'held back by spike protection',
  ingest_backlog: 'refused: Lookout was taking in more than it could write',
  ingest_slow: 'refused: writes were slow',
  event_loop: 'refused: Lookout was busy',
  queue_depth: 'refused: the processing queue was deep',
  redis_memory: 'refused: Redis was near its maxmemory',
  disk_floor: "refused: the data folder's disk was under its floor",
  filtered_browser_extensions: 'filtered: thrown by a browser extension',
  filtered_localhost: 'filtered: from localhost',
  filtered_legacy_browsers: 'filtered: from a legacy browser',
  filtered_release: 'filtered: a release filtered out',
  filtered_error_message: 'filtered: a message filtered out',
};

type Limits = Pick<Project, 'quotas' | 'filters'>;
const QUOTA_FIELDS: [keyof Project['quotas'], string][] = [
  ['events_per_minute', 'Error events a minute'],
  ['events_per_hour', 'Error events an hour'],
  ['events_per_month', 'Error events a month'],
  ['sessions_per_minute', 'Sessions a minute'],
  ['sessions_per_hour', 'Sessions an hour'],
  ['sessions_per_month', 'Sessions a month'],
];
const FILTER_SWITCHES: [keyof Pick<Project['filters'], 'browser_extensions' | 'localhost' | 'legacy_browsers'>, string][] = [
  ['browser_extensions', 'Errors thrown by browser extensions'],
  ['localhost', 'Errors from localhost'],
  ['legacy_browsers', 'Errors from legacy browsers (Internet Explorer, old Safari, Firefox, Chrome)'],
];

/**
 * Settings → Quotas and filters: a project's limits per window (empty: none), spike protection, and the inbound
 * filters; an owner changes them, a member reads them.
 */
function LimitsForm({ project, owner, busy, save }: { project: Project; owner: boolean; busy: boolean; save: (set: Partial<Limits>) => void }) {
  const [quotas, setQuotas] = useState(() => Object.fromEntries(QUOTA_FIELDS.map(([k]) => [k, project.quotas[k] === null ? '' : String(project.quotas[k])])));
  const [spike, setSpike] = useState(project.quotas.spike_protection);
  const [switches, setSwitches] = useState(() => Object.fromEntries(FILTER_SWITCHES.map(([k]) => [k, project.filters[k]])));
  const [releases, setReleases] = useState(project.filters.releases.join('\n'));
  const [messages, setMessages] = useState(project.filters.error_messages.join('\n'));
  const lines = (text: string) => text.split('\n').map((l) => l.trim()).filter(Boolean);
  return (
    <>
      <h2>Quotas and filters</h2>
      <p class="muted">
        Over a quota, the project's items of that kind are refused (429, with when to retry) until the minute, hour or month ends; other projects are served as usual.
        Sign-in attempts count against none. Filtered error events are counted under Ingestion and never stored.
      </p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const number = (v: string) => (v.trim() === '' ? null : Number(v));
          save({
            quotas: { ...(Object.fromEntries(QUOTA_FIELDS.map(([k]) => [k, number(quotas[k]!)])) as Omit<Project['quotas'], 'spike_protection'>), spike_protection: spike },
            filters: { ...switches, releases: lines(releases), error_messages: lines(messages) } as Project['filters'],
          });
        }}
      >
        <fieldset disabled={!owner || busy}>
          <legend>Quotas (empty: no limit)</legend>
          <div class="fields">
            {QUOTA_FIELDS.map(([k, label]) => (
              <label key={k}>
                {label}{' '}
                <input type="number" name={k} min={1} placeholder="no limit" value={quotas[k]} onInput={(e) => setQuotas({ ...quotas, [k]: (e.target as HTMLInputElement).value })} />
              </label>
            ))}
          </div>
          <label class="check">
            <input type="checkbox" name="spike_protection" checked={spike} onChange={(e) => setSpike((e.target as HTMLInputElement).checked)} /> Spike protection: hold error events to ten
            times the usual rate (never under the installation's floor) and notify once
          </label>
        </fieldset>
        <fieldset disabled={!owner || busy}>
          <legend>Inbound filters</legend>
          {FILTER_SWITCHES.map(([k, label]) => (
            <label key={k} class="check">
              <input type="checkbox" name={k} checked={switches[k]} onChange={(e) => setSwitches({ ...switches, [k]: (e.target as HTMLInputElement).checked })} /> {label}
            </label>
          ))}
          <label>
            Releases to filter out (globs, one a line: <code>*-dev</code>)
            <textarea name="releases" rows={2} value={releases} onInput={(e) => setReleases((e.target as HTMLTextAreaElement).value)} />
          </label>
          <label>
            Error messages or types to filter out (globs, one a line: <code>*ResizeObserver loop*</code>)
            <textarea name="error_messages" rows={2} value={messages} onInput={(e) => setMessages((e.target as HTMLTextAreaElement).value)} />
          </label>
        </fieldset>
        {owner && (
          <p class="actions">
            <button type="submit" disabled={busy}>
              Save quotas and filters
            </button>
          </p>
        )}
      </form>
    </>
  );
}

/** The tabs of a project's pages. */
export function ProjectNav({ id, current }: { id: string; current: 'releases' | 'issues' | 'alerts' | 'settings' }) {
  const tabs = [
    ['releases', 'Releases'],
    ['issues', 'Issues'],
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
