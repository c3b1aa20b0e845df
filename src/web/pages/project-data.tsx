/** A project's settings page, its data: the source map bundles uploaded, and what it took in and dropped (ingestion). */
import { useState } from 'preact/hooks';
import { api, type Session } from '../api.ts';
import { count } from '../format.ts';
import type { IngestCounts, Project, SourcemapBundles } from '../types.ts';
import { CopyText, Failure, Figures, Listed, Show, Time, useAction, useLoad } from '../ui.tsx';

const sizeText = (bytes: number) =>
  bytes < 1024 * 1024 ? `${count(Math.ceil(bytes / 1024))} KB` : bytes < 1024 ** 3 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${(bytes / 1024 ** 3).toFixed(1)} GB`;

/**
 * Settings → Source maps: how to upload with sentry-cli (the lines of a .sentryclirc), and the bundles uploaded,
 * each with its files, which a member may delete.
 */
export function SourceMaps({ id, project, session }: { id: string; project: Project; session: Session }) {
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
export function Ingestion({ id }: { id: string }) {
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
  invalid_timestamps: 'times that cannot be used (ends before it starts, or in the future)',
  missing_ids: 'no trace or span id',
  too_old: 'older than the minutes Lookout keeps',
  invalid_item_count: "its item_count differs from the lines it holds",
};

