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

/** A range of an issue's scores in the list's ordered sets: first seen, last seen (ms), events. */
export interface ScoreRange {
  on: 'first' | 'last' | 'count';
  min: number;
  max: number;
}

/**
 * A filter set of the list (apply-events-4.lua and snapshot-issues-3.lua keep them): whether `xn:<status>` counts
 * it, and the set of the other issues where one is kept (`fx:user` and `fx:nouser`), through which a large set's
 * match is counted when that one is smaller.
 */
export interface FilterSet {
  set: string;
  counted: boolean;
  complement?: string;
}

/**
 * What a list must match, in the list's own terms (src/state/issue-reads.ts reads it): one status; filter sets the
 * issue must be in (`counted`: a set whose size per status the list keeps) and must not be in; score ranges; and
 * the spread field whose events each row counts (the release's, the environment's, or both's).
 */
export interface ListPlan {
  status: (typeof STATUSES)[number];
  sets: FilterSet[];
  not: FilterSet[];
  ranges: ScoreRange[];
  count?: string;
}

/** Who asks and when: `assigned:me` is the signed-in user (none for an installation's key), ages count back from `now`. */
export interface SearchContext {
  me: string | null;
  now: Date;
}

/** The largest score any range reaches: counts and times in ms are far below it. */
const MAX_SCORE = Number.MAX_SAFE_INTEGER;

/**
 * A search as what the issue list matches. Release and environment terms match the events (an issue with
 * a 17.0.5 event in staging and a 17.0.4 one in production is not listed for `release:erp@17.0.5
 * environment:production`), and the rows then count only those events. A term the list cannot serve is named in
 * `unknown` with why: the answer says what it did not apply.
 */
export function listPlan(search: Search, ctx: SearchContext, status: ListPlan['status'] = 'unresolved'): { plan: ListPlan; unknown: Search['unknown'] } {
  const plan: ListPlan = { status, sets: [], not: [], ranges: [] };
  const unknown = [...search.unknown];
  const cannot = (t: SearchTerm, reason: string) => unknown.push({ term: termText(t), reason });
  const statuses = search.terms.filter((t) => t.kind === 'status');
  const set = (t: SearchTerm, name: string, counted: boolean) => {
    // a set whose complement is kept: negated, the issue is in the complement
    const complement = COMPLEMENTS[name];
    if (complement) plan.sets.push(t.negated ? { set: complement, counted, complement: name } : { set: name, counted, complement });
    else (t.negated ? plan.not : plan.sets).push({ set: name, counted });
  };
  // the release and environment of events, matched together when both are asked
  const release = search.terms.find((t) => t.kind === 'field' && t.field === 'release' && !t.negated) as { value: string } | undefined;
  const environment = search.terms.find((t) => t.kind === 'field' && t.field === 'environment' && !t.negated) as { value: string } | undefined;
  for (const t of statuses) {
    if (t.negated) cannot(t, 'the list shows one status at a time: name it with is:');
    else if (t !== statuses.find((s) => !s.negated)) cannot(t, 'one is: status at a time');
    else plan.status = t.status;
  }
  for (const t of search.terms) {
    switch (t.kind) {
      case 'status':
        break;
      case 'regressed':
        set(t, 'fx:regressed', false);
        break;
      case 'assigned':
        if (t.to === 'anyone') set(t, 'fx:assigned', false);
        else if (t.to === 'me' && ctx.me === null) cannot(t, 'assigned:me needs a signed-in user; name the email');
        else set(t, `fa:${t.to === 'me' ? ctx.me : t.to}`, false);
        break;
      case 'has':
        if (t.what === 'user') set(t, 'fx:user', false);
        else if (t.what === 'assignee') set(t, 'fx:assigned', false);
        else cannot(t, 'the issue list does not search by this yet');
        break;
      case 'tag':
        set(t, `ft:${t.key}=${t.value}`, true);
        break;
      case 'field':
        if ((t === release || t === environment) && release && environment) {
          if (t === release) set(t, `fv:${release.value}\n${environment.value}`, true);
        } else set(t, fieldSet(t.field, t.value), COUNTED.has(t.field));
        break;
      case 'age':
      case 'last-seen': {
        const since = ctx.now.getTime() - t.ms;
        // newer than `ms` ago is first (or last) seen after it; negated, at or before it
        const newer = t.newer !== t.negated;
        plan.ranges.push({ on: t.kind === 'age' ? 'first' : 'last', min: newer ? since : 0, max: newer ? MAX_SCORE : since });
        break;
      }
      case 'times-seen': {
        const op = t.negated ? NEGATED_OP[t.op] : t.op;
        if (op === null) cannot(t, 'times-seen cannot be negated with =: use < and >');
        else plan.ranges.push({ on: 'count', ...countRange(op, t.count) });
        break;
      }
    }
  }
  const words = new Set(search.text.flatMap((text) => textWords(text)));
  for (const word of words) plan.sets.push({ set: `tx:${word}`, counted: true });
  if (release && environment) plan.count = `v:${release.value}\n${environment.value}`;
  else if (release) plan.count = `r:${release.value}`;
  else if (environment) plan.count = `e:${environment.value}`;
  return { plan, unknown };
}

/** Sets kept with their complement (every listed issue is in one of the two: snapshot-issues-3.lua). */
const COMPLEMENTS: Record<string, string> = { 'fx:user': 'fx:nouser' };

/** The fields whose sets the list counts per status. */
const COUNTED = new Set<string>(['level', 'release', 'environment', 'company']);

/** The filter set of a field's value (apply-events-4.lua and snapshot-issues-3.lua keep them). */
function fieldSet(field: Exclude<Field, 'assigned'>, value: string): string {
  switch (field) {
    case 'level':
      return `fl:${value}`;
    case 'release':
      return `fr:${value}`;
    case 'environment':
      return `fe:${value}`;
    case 'company':
      return `fc:${value}`;
    case 'first-release':
      return `ff:${value}`;
    case 'user.id':
      return `fu:i:${value}`;
    case 'user.email':
      return `fu:m:${value.toLowerCase()}`;
  }
}

type CountOp = '>' | '>=' | '<' | '<=' | '=';
const NEGATED_OP: Record<CountOp, CountOp | null> = { '>': '<=', '>=': '<', '<': '>=', '<=': '>', '=': null };

function countRange(op: CountOp, n: number): { min: number; max: number } {
  switch (op) {
    case '>':
      return { min: n + 1, max: MAX_SCORE };
    case '>=':
      return { min: n, max: MAX_SCORE };
    case '<':
      return { min: 0, max: n - 1 };
    case '<=':
      return { min: 0, max: n };
    case '=':
      return { min: n, max: n };
  }
}

/**
 * The words of a search's free text, split as snapshot-issues-3.lua splits titles and culprits: at ASCII spaces
 * and punctuation, ASCII letters lower-cased, one-character words left out. An issue matches when its title or
 * culprit holds every word, whole or as a camelCase part (`beta` finds `BetaError`). Words that follow each other
 * (a quoted phrase's, or `app.run`'s) also come as pairs, '<word> <word>', which the index keeps for each two
 * neighbouring whole words of a line: so "failed for journal" finds neither "journal failed for" nor "failed for
 * lookup of journal".
 */
export function textWords(text: string): string[] {
  const lower = text.replace(/[A-Z]+/g, (s) => s.toLowerCase());
  const whole = lower.split(/[ \t\n\v\f\r!-/:-@[-`{-~]+/).filter((w) => w !== '');
  const pairs = whole.slice(1).map((w, i) => `${whole[i]} ${w}`);
  return [...new Set([...whole.filter((w) => w.length > 1), ...pairs])];
}

/** A term's value as a search writes it: quoted when it holds a space (a double quote cannot be searched for). */
export const quoted = (value: string) => (/[\s"]/.test(value) ? `"${value.replace(/"/g, '')}"` : value);

/** A term as it is written in a search. */
export function termText(t: SearchTerm): string {
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
