/**
 * Slugs: the names tools address organisations and projects by in Sentry's web API (`sentry-cli --org acme
 * --project shop`). Made once from the name when the organisation or project is made, never changed with it; never
 * all digits, so a path segment of digits is always an id.
 */

/** Most characters of a slug (Sentry's limit). */
export const SLUG_MAX = 50;

/** A name as a slug: lower-case ASCII letters, digits and single hyphens; `fallback` when nothing of it is left. */
export function slugify(name: string, fallback: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '');
  if (base === '') return fallback;
  return /^\d+$/.test(base) ? `${fallback}-${base}`.slice(0, SLUG_MAX) : base;
}

/** Numbered attempts before a random suffix: `shop`, `shop-2`, `shop-3`, then `shop-k3x9q2`. */
export const NUMBERED_ATTEMPTS = 3;

/**
 * The slug to try on the n-th attempt (0 first): the base, then the base with `-2`, `-3`, then with the `random`
 * suffix given (so a name made a thousand times takes a few attempts, not a thousand), within the limit.
 */
export function slugAttempt(base: string, n: number, random = ''): string {
  if (n === 0) return base;
  const suffix = n < NUMBERED_ATTEMPTS ? `-${n + 1}` : `-${random}`;
  return `${base.slice(0, SLUG_MAX - suffix.length).replace(/-+$/, '')}${suffix}`;
}

/** Whether a path segment names by id (digits) rather than by slug. */
export const isId = (segment: string) => /^\d+$/.test(segment);
