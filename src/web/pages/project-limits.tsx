/** A project's settings page, its limits: quotas, spike protection and inbound filters (owners change them). */
import { useState } from 'preact/hooks';
import type { Project } from '../types.ts';

type Limits = Pick<Project, 'quotas' | 'filters'>;

const QUOTA_FIELDS: [keyof Project['quotas'], string][] = [
  ['events_per_minute', 'Error events a minute'],
  ['events_per_hour', 'Error events an hour'],
  ['events_per_month', 'Error events a month'],
  ['sessions_per_minute', 'Sessions a minute'],
  ['sessions_per_hour', 'Sessions an hour'],
  ['sessions_per_month', 'Sessions a month'],
  ['transactions_per_minute', 'Transactions a minute'],
  ['transactions_per_hour', 'Transactions an hour'],
  ['transactions_per_month', 'Transactions a month'],
  ['spans_per_minute', 'Spans a minute'],
  ['spans_per_hour', 'Spans an hour'],
  ['spans_per_month', 'Spans a month'],
  ['log_items_per_minute', 'Log lines a minute'],
  ['log_items_per_hour', 'Log lines an hour'],
  ['log_items_per_month', 'Log lines a month'],
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
export function LimitsForm({ project, owner, busy, save }: { project: Project; owner: boolean; busy: boolean; save: (set: Partial<Limits>) => void }) {
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
