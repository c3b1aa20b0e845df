/** How numbers, rates and times read on every page. */
/** A rate from 0 to 1 as a percentage to two decimals at most (99.95%, 90%); no rate, a dash. */
export const percent = (rate: number | null | undefined): string => (rate === null || rate === undefined ? '—' : `${Number((rate * 100).toFixed(2))}%`);

export const count = (n: number): string => n.toLocaleString('en');

/** UTC, to the minute: every user of the organisation reads the same time. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

const UNITS: [ms: number, one: string, many: string][] = [
  [86_400_000 * 365, 'year', 'years'],
  [86_400_000 * 30, 'month', 'months'],
  [86_400_000 * 7, 'week', 'weeks'],
  [86_400_000, 'day', 'days'],
  [3_600_000, 'hour', 'hours'],
  [60_000, 'minute', 'minutes'],
];

/** How long ago (or in how long) a time is, in its largest whole unit: "3 hours ago", "in 2 days", "just now". */
export function ago(iso: string, now = Date.now()): string {
  const diff = now - Date.parse(iso);
  const size = Math.abs(diff);
  const unit = UNITS.find(([ms]) => size >= ms);
  if (!unit) return diff >= 0 ? 'just now' : 'in a minute';
  const n = Math.floor(size / unit[0]);
  const text = `${n} ${n === 1 ? unit[1] : unit[2]}`;
  return diff >= 0 ? `${text} ago` : `in ${text}`;
}
