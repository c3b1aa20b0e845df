/**
 * Names that vary by value made into the one name of what they do (issue 69): a raw URL's ids, a SQL statement's
 * literals. A transaction named by its URL (`transaction_info.source: url`) is grouped by its parameterised path,
 * and spans are grouped by operation and parameterised description, so `SELECT … WHERE id = 42` and `… = 43` are
 * one query and an N+1 shows as one query many times.
 */

/** Path segments that are ids: numbers, UUIDs, long hex, and long mixed tokens with digits. */
const ID_SEGMENT = /^(\d+|[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}|[0-9a-f]{12,}|(?=[^/]*\d)[A-Za-z0-9_-]{20,})$/i;

/** The path of a URL (no scheme, host, query or fragment kept) with each id segment replaced by `*`. */
export function parameterizePath(url: string): string {
  let path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  path = path.replace(/[?#].*$/s, '');
  if (path === '') path = '/';
  return path
    .split('/')
    .map((segment) => (ID_SEGMENT.test(segment) ? '*' : segment))
    .join('/');
}

/** A URL with its path parameterised, keeping its scheme and host (an outgoing request's span). */
export function parameterizeUrl(url: string): string {
  const origin = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(url)?.[0] ?? '';
  return origin + parameterizePath(url);
}

/**
 * A SQL statement with its literals replaced by `%s`: quoted strings, numbers, and lists of them (`IN (%s, %s)`
 * becomes `IN (%s)`), and whitespace collapsed.
 */
export function parameterizeSql(sql: string): string {
  return sql
    .replace(/'(?:[^']|'')*'/g, '%s')
    .replace(/(?<![\w$."])-?\b\d+(?:\.\d+)?\b/g, '%s')
    .replace(/\(\s*%s(?:\s*,\s*%s)+\s*\)/g, '(%s)')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The most of a span group's description kept. */
export const DESCRIPTION_MAX = 500;

/**
 * A span's description as its group names it: SQL parameterised for `db` operations, an HTTP client's URL
 * parameterised (its method kept), anything else as sent; cut to DESCRIPTION_MAX.
 */
export function spanGroupDescription(op: string, description: string): string {
  let out = description;
  if (op === 'db' || op.startsWith('db.') || op === 'sql' || op.startsWith('sql.')) out = parameterizeSql(description);
  else if (op.startsWith('http')) {
    const m = /^([A-Z]+) (\S+)$/.exec(description);
    out = m ? `${m[1]} ${parameterizeUrl(m[2]!)}` : parameterizeUrl(description);
  }
  return out.length > DESCRIPTION_MAX ? out.slice(0, DESCRIPTION_MAX) : out;
}
