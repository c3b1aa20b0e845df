/** Where an issue's events come from and when: its spread by value and its events per hour (the issue page). */
import { useState } from 'preact/hooks';
import { count, when } from '../format.ts';
import type { IssueDetail } from '../types.ts';
import { Bars } from '../ui.tsx';

export function Spread({ title, rows, of = 'Events' }: { title: string; rows: { value: string; count: number }[]; of?: string }) {
  return (
    <div class="spread">
      <h3>{title}</h3>
      {rows.length === 0 ? (
        <p class="muted">None sent.</p>
      ) : (
        <div class="scroll" tabIndex={0}>
          <table>
            <caption class="sr-only">
              {of} by {title.toLowerCase()}
            </caption>
            <tbody>
              {rows.map((r) => (
                <tr key={r.value}>
                  <th scope="row">{r.value}</th>
                  <td class="num">{count(r.count)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

export function PerHour({ hourly, what = 'events' }: { hourly: IssueDetail['hourly']; what?: 'events' | 'attempts' }) {
  const [span, setSpan] = useState<'24h' | '14d'>('24h');
  const counts = span === '24h' ? hourly.last_24h : hourly.last_14d;
  const total = counts.reduce((a, b) => a + b, 0);
  return (
    <section aria-labelledby="activity">
      <h2 id="activity">{what === 'events' ? 'Events' : 'Attempts'} per hour</h2>
      <div role="group" aria-label="Period" class="segmented">
        <button type="button" aria-pressed={span === '24h'} onClick={() => setSpan('24h')}>
          Last 24 hours
        </button>
        <button type="button" aria-pressed={span === '14d'} onClick={() => setSpan('14d')}>
          Last 14 days
        </button>
      </div>
      <Bars
        counts={counts}
        width={720}
        height={80}
        label={`${count(total)} ${what} in the ${span === '24h' ? 'last 24 hours' : 'last 14 days'}, one bar per hour`}
      />
      <p class="muted">
        {count(total)} {total === 1 ? what.slice(0, -1) : what}, one bar per hour up to {when(hourly.until)}.
      </p>
    </section>
  );
}
