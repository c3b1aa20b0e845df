/** How numbers, rates and times read on every page. */
/** A rate from 0 to 1 as a percentage to two decimals at most (99.95%, 90%); no rate, a dash. */
export const percent = (rate: number | null | undefined): string => (rate === null || rate === undefined ? '—' : `${Number((rate * 100).toFixed(2))}%`);

export const count = (n: number): string => n.toLocaleString('en');

/** UTC, to the minute: every user of the organisation reads the same time. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}
