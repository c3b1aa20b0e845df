/**
 * `Date.prototype.toISOString` for many times at once (a bouncer's startup list writes 100,000): the date part is
 * made once per day and the time of day by hand, about ten times faster than a Date per time.
 */
const DAY_MS = 86_400_000;
let day = NaN;
let dayText = '';

const two = (n: number) => (n < 10 ? `0${n}` : String(n));
const three = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : String(n));

/** As `new Date(ms).toISOString()` for times from 1970 to 9999. */
export function isoTime(ms: number): string {
  const start = ms - (ms % DAY_MS);
  if (start !== day) {
    day = start;
    dayText = new Date(start).toISOString().slice(0, 11);
  }
  const t = ms - start;
  return `${dayText}${two(Math.floor(t / 3_600_000))}:${two(Math.floor(t / 60_000) % 60)}:${two(Math.floor(t / 1000) % 60)}.${three(t % 1000)}Z`;
}
