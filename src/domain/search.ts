/**
 * The issue search, in Sentry's syntax (issue 50): `is:unresolved release:erp@17.0.5 !environment:staging
 * browser:Chrome times-seen:>100 "card declined"`. One pure function reads a search into terms; a term Lookout does
 * not understand is named with its reason, never dropped, so a list that finds nothing can say why.
 */

/** Fields a term names directly; any other `key:value` is a tag. */
export const FIELDS = ['level', 'release', 'first-release', 'environment', 'user.id', 'user.email', 'company', 'assigned'] as const;
export type Field = (typeof FIELDS)[number];
const STATUSES = ['unresolved', 'resolved', 'ignored'] as const;
const LEVELS = ['debug', 'info', 'warning', 'error', 'fatal'] as const;
type Level = (typeof LEVELS)[number];
/** What `has:` can ask for. */
const HAS = ['user', 'release', 'environment', 'company', 'assignee'] as const;

export type SearchTerm = { negated: boolean } & (
  | { kind: 'status'; status: (typeof STATUSES)[number] }
  | { kind: 'regressed' }
  /** is:assigned (to anyone), assigned:me, assigned:<email> */
  | { kind: 'assigned'; to: 'anyone' | 'me' | string }
  | { kind: 'field'; field: Exclude<Field, 'assigned'>; value: string }
  | { kind: 'has'; what: (typeof HAS)[number] }
  | { kind: 'tag'; key: string; value: string }
  /** age (first seen) or last-seen: newer than `ms` ago (`-24h`) or older (`+24h`) */
  | { kind: 'age' | 'last-seen'; newer: boolean; ms: number }
  | { kind: 'times-seen'; op: '>' | '>=' | '<' | '<=' | '='; count: number }
);

export interface Search {
  terms: SearchTerm[];
  /** the free text (quoted phrases kept whole), matched against title, culprit and message */
  text: string[];
  /** what could not be read, each with why */
  unknown: { term: string; reason: string }[];
}

/** Every key with a meaning of its own (any other is a tag's). */
const KEYS = new Set<string>([...FIELDS, 'is', 'has', 'age', 'last-seen', 'times-seen']);

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** The search split at spaces, a double-quoted run (`"card declined"`, `release:"erp 17"`) kept whole. */
export function tokens(search: string): string[] {
  const out: string[] = [];
  for (const m of search.matchAll(/(?:[^\s"]+|"[^"]*"?)+/g)) out.push(m[0]);
  return out;
}

const unquoted = (value: string) => (value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value.replace(/^"/, ''));

export function parseSearch(search: string): Search {
  const out: Search = { terms: [], text: [], unknown: [] };
  for (const token of tokens(search)) {
    const negated = token.startsWith('!');
    const body = negated ? token.slice(1) : token;
    const colon = body.indexOf(':');
    // free text: no key, or a quoted phrase (which may hold a colon)
    if (colon <= 0 || body.startsWith('"')) {
      if (negated) out.unknown.push({ term: token, reason: 'free text cannot be negated' });
      else if (unquoted(body) !== '') out.text.push(unquoted(body));
      continue;
    }
    const key = body.slice(0, colon).toLowerCase();
    const value = unquoted(body.slice(colon + 1));
    // a word that ends in a colon (`KeyError:`) is text, unless it names a field
    if (value === '' && !KEYS.has(key)) {
      if (negated) out.unknown.push({ term: token, reason: 'free text cannot be negated' });
      else out.text.push(body);
      continue;
    }
    const term = readTerm(key, value, negated);
    if (typeof term === 'string') out.unknown.push({ term: token, reason: term });
    else out.terms.push(term);
  }
  return out;
}

/** One `key:value` as a term, or why it is not one. */
function readTerm(key: string, value: string, negated: boolean): SearchTerm | string {
  if (value === '') return `${key}: needs a value`;
  switch (key) {
    case 'is': {
      const v = value.toLowerCase();
      if ((STATUSES as readonly string[]).includes(v)) return { kind: 'status', status: v as (typeof STATUSES)[number], negated };
      if (v === 'regressed') return { kind: 'regressed', negated };
      if (v === 'assigned') return { kind: 'assigned', to: 'anyone', negated };
      if (v === 'unassigned') return { kind: 'assigned', to: 'anyone', negated: !negated };
      return `is: takes ${[...STATUSES, 'regressed', 'assigned', 'unassigned'].join(', ')}`;
    }
    case 'assigned':
      return { kind: 'assigned', to: value.toLowerCase() === 'me' ? 'me' : value.toLowerCase(), negated };
    case 'has': {
      const v = value.toLowerCase();
      return (HAS as readonly string[]).includes(v) ? { kind: 'has', what: v as (typeof HAS)[number], negated } : `has: takes ${HAS.join(', ')}`;
    }
    case 'level':
      return (LEVELS as readonly string[]).includes(value.toLowerCase())
        ? { kind: 'field', field: 'level', value: value.toLowerCase(), negated }
        : `level: takes ${LEVELS.join(', ')}`;
    case 'age':
    case 'last-seen': {
      const m = /^([+-])(\d{1,6})([mhdw])$/.exec(value);
      if (!m) return `${key}: takes a signed time such as -24h (newer than) or +7d (older than), in m, h, d or w`;
      return { kind: key, newer: m[1] === '-', ms: Number(m[2]) * UNITS[m[3]!]!, negated };
    }
    case 'times-seen': {
      const m = /^(>=|<=|>|<|=)?(\d{1,12})$/.exec(value);
      if (!m) return 'times-seen: takes a count, with >, >=, < or <= before it if need be';
      return { kind: 'times-seen', op: (m[1] ?? '=') as '>' | '>=' | '<' | '<=' | '=', count: Number(m[2]), negated };
    }
    default:
      if ((FIELDS as readonly string[]).includes(key)) return { kind: 'field', field: key as Exclude<Field, 'assigned'>, value, negated };
      if (!/^[\w.-]{1,32}$/.test(key)) return 'not a field or a tag name';
      return { kind: 'tag', key, value, negated };
  }
}

/** The filters of the issue list a search sets (src/state/issue-reads.ts), and the terms the list cannot serve yet. */
export interface ListFilters {
  status?: (typeof STATUSES)[number];
  level?: Level;
  release?: string;
  environment?: string;
  company?: string;
  /** the free text, word by word */
  query?: string;
}

/**
 * A search as the issue list's filters. The list serves a status, a level, a release, an environment, a company and
 * words in titles and culprits, one of each; any other term (and a second of one kind, or a negated one) is named
 * in `unknown` with why, so that the answer says what it did not apply.
 */
export function listFilters(search: Search): { filters: ListFilters; unknown: Search['unknown'] } {
  const filters: ListFilters = {};
  const unknown = [...search.unknown];
  for (const t of search.terms) {
    const name = t.kind === 'status' ? 'status' : t.kind === 'field' ? t.field : null;
    if (t.negated || name === null || !(name === 'status' || name in FIELD_FILTERS)) {
      unknown.push({ term: termText(t), reason: 'the issue list does not search by this yet' });
      continue;
    }
    const filter = name === 'status' ? 'status' : FIELD_FILTERS[name as keyof typeof FIELD_FILTERS];
    if (filters[filter] !== undefined) {
      unknown.push({ term: termText(t), reason: `one ${name}: term at a time` });
      continue;
    }
    filters[filter] = (t.kind === 'status' ? t.status : (t as { value: string }).value) as never;
  }
  const words = search.text.join(' ').trim();
  if (words) filters.query = words;
  return { filters, unknown };
}

/** The search fields the list serves, by the list filter each sets. */
const FIELD_FILTERS = { level: 'level', release: 'release', environment: 'environment', company: 'company' } as const;

/** A term as it is written in a search. */
export function termText(t: SearchTerm): string {
  const quoted = (v: string) => (/[\s"]/.test(v) ? `"${v}"` : v);
  const not = t.negated ? '!' : '';
  switch (t.kind) {
    case 'status':
      return `${not}is:${t.status}`;
    case 'regressed':
      return `${not}is:regressed`;
    case 'assigned':
      return t.to === 'anyone' ? (t.negated ? 'is:unassigned' : 'is:assigned') : `${not}assigned:${t.to}`;
    case 'field':
      return `${not}${t.field}:${quoted(t.value)}`;
    case 'has':
      return `${not}has:${t.what}`;
    case 'tag':
      return `${not}${t.key}:${quoted(t.value)}`;
    case 'age':
    case 'last-seen': {
      const [unit, size] = Object.entries(UNITS).reverse().find(([, ms]) => t.ms % ms === 0)!;
      return `${not}${t.kind}:${t.newer ? '-' : '+'}${t.ms / size}${unit}`;
    }
    case 'times-seen':
      return `${not}times-seen:${t.op === '=' ? '' : t.op}${t.count}`;
  }
}
