/**
 * Keys and set members built from client text (issue 53). Every string a
 * client sends (actor, release, environment, company, tags, messages) may hold
 * any character, `|`, `:`, braces, line breaks and NUL among them, so each
 * composite key here either ends in the one client string it holds (read back
 * as everything after a fixed prefix), holds JSON of its parts, or is a hash
 * of the canonical JSON of its parts, whose parts travel beside it. Nothing is
 * ever split on a separator a client can type. docs/decisions.md lists every
 * key that holds client text and how it is encoded.
 *
 * The Lua scripts that build the same strings (apply-events-4.lua's spread
 * fields and filter sets) follow the forms documented here; the scripts get
 * attempts' members ready made.
 */
import crypto from 'node:crypto';

/** Some text a client sent, as Lookout keeps it: lone UTF-16 surrogates become U+FFFD (JSON and Redis' cjson refuse them). */
export function wellFormed(text: string): string {
  // in a `u` pattern a pair is one code point, so \p{Cs} matches only a surrogate standing alone
  return LONE_SURROGATE.test(text) ? text.replace(LONE_SURROGATE_ALL, '\uFFFD') : text;
}
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATE_ALL = /\p{Cs}/gu;

/** At most `max` UTF-16 units of `text`, never ending in half of a surrogate pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const high = text.charCodeAt(max - 1);
  return text.slice(0, high >= 0xd800 && high <= 0xdbff ? max - 1 : max);
}

/** The first `bytes` of the SHA-256 of the JSON array of `parts`. */
const digest = (parts: readonly (string | null)[], bytes: number) => crypto.createHash('sha256').update(JSON.stringify(parts)).digest().subarray(0, bytes);

/**
 * The brute-force detector's group of an attempt: its actor from its address. The key is a hash of the JSON
 * array [actor, ip] (16 bytes, base64url): it is never read back; the actor and address go beside it.
 */
export function attemptGroupKey(actor: string | null, ip: string | null): string {
  return digest([actor, ip], 16).toString('base64url');
}

/**
 * The subject of a release's crash-free rule (src/notify/rules.ts): a hash of the JSON array [release,
 * environment], never read back.
 */
export function releaseSubject(release: string, environment: string): string {
  return `r${digest([release, environment], 8).toString('hex')}`;
}

/** A sign-in attempt as its members in the detectors' sorted sets hold it. */
export interface AttemptMember {
  /** the event id: 32 hex digits (its 16 bytes in base64url in the member), or as sent before ids were checked */
  id: string;
  /** a one-letter code (`f`, `s`) or a kind's name: never holds `|` */
  kind: string;
  /** the actor (the address's set only): any text, last in the member */
  actor?: string;
}

/**
 * An attempt's member: `<id>|<kind>` in its group's set, `<id>|<kind>|<actor>` in its address's. The id and kind
 * are Lookout's (checked here), the actor is everything after the second `|`, whatever it holds.
 */
export function attemptMember(a: AttemptMember): string {
  const id = /^[0-9a-f]{32}$/.test(a.id) ? Buffer.from(a.id, 'hex').toString('base64url') : a.id;
  if (id.includes('|') || a.kind.includes('|')) throw new Error(`an attempt member's id and kind hold no '|': ${JSON.stringify([a.id, a.kind])}`);
  return a.actor === undefined ? `${id}|${a.kind}` : `${id}|${a.kind}|${a.actor}`;
}

export function readAttemptMember(member: string): AttemptMember {
  const first = member.indexOf('|');
  const second = member.indexOf('|', first + 1);
  const rawId = member.slice(0, first);
  const id = rawId.length === 22 ? Buffer.from(rawId, 'base64url').toString('hex') : rawId;
  if (second < 0) return { id, kind: member.slice(first + 1) };
  return { id, kind: member.slice(first + 1, second), actor: member.slice(second + 1) };
}

/**
 * The dimensions an issue's spread counts: an error issue's releases, environments, companies, release and
 * environment pairs (`<release>\n<environment>`) and tag values (`<key>=<value>`), each with a filter set of its
 * own; a security issue's actors and addresses (apply-burst-3.lua).
 */
export type SpreadDim = 'r' | 'e' | 'c' | 'a' | 'i' | 'v' | 't';
export const SPREAD_DIMS = {
  release: 'r',
  environment: 'e',
  company: 'c',
  actor: 'a',
  address: 'i',
  releaseEnvironment: 'v',
  tag: 't',
} as const satisfies Record<string, SpreadDim>;

/** The spread fields an error event counts in (apply-events-4.lua counts the same), tags `<key>=<value>`. */
export function eventSpread(e: { release: string | null; environment?: string | null; company?: string | null; tags?: readonly string[] }): string[] {
  const out: string[] = [];
  if (e.release) out.push(spreadField('r', e.release));
  if (e.environment) out.push(spreadField('e', e.environment));
  if (e.company) out.push(spreadField('c', e.company));
  if (e.release && e.environment) out.push(spreadField('v', `${e.release}\n${e.environment}`));
  for (const tag of e.tags ?? []) out.push(spreadField('t', tag));
  return out;
}

/** A field of an issue's spread (`is:<issue>`): `<dim>:<value>`, the value everything after the fixed two characters. */
export function spreadField(dim: SpreadDim, value: string): string {
  return `${dim}:${value}`;
}
export function readSpreadField(field: string): { dim: SpreadDim; value: string } | null {
  const dim = field[0];
  if (field[1] !== ':' || !dim || !'recaivt'.includes(dim)) return null; // a field of no dimension is not spread ('o:tags')
  return { dim: dim as SpreadDim, value: field.slice(2) };
}

/** The filter set an issue's spread field puts it in (`r:<release>` → `fr:<release>`), as apply-events-4.lua names it. */
export function filterSetOfSpread(field: string): string {
  return `f${field}`;
}

/** A release bucket of the session rollups: the JSON array [environment, release]. */
export function bucketKey(environment: string, release: string): string {
  return JSON.stringify([environment, release]);
}
export function readBucketKey(key: string): { environment: string; release: string } {
  const [environment, release] = JSON.parse(key) as [string, string];
  return { environment, release };
}

/** A rollup's key under the project's prefix: `rh:<hour start, ms>:<bucket>` for an hour, `rr:<bucket>` for a release. */
export function rollupKey(bucket: string, hour: number | null): string {
  return hour === null ? `rr:${bucket}` : `rh:${hour}:${bucket}`;
}
export function readRollupKey(key: string): { hour: number | null; environment: string; release: string } {
  if (key.startsWith('rr:')) return { hour: null, ...readBucketKey(key.slice(3)) };
  const colon = key.indexOf(':', 3);
  if (!key.startsWith('rh:') || colon < 0) throw new Error(`not a rollup key: ${JSON.stringify(key)}`);
  return { hour: Number(key.slice(3, colon)), ...readBucketKey(key.slice(colon + 1)) };
}

/** A field of a project's ingestion counts of an hour (src/state/ingest-stats.ts): the JSON array [outcome, type, reason]. */
export function ingestField(outcome: string, type: string, reason: string): string {
  return JSON.stringify([outcome, type, reason]);
}
export function readIngestField(field: string): { outcome: string; type: string; reason: string } {
  const [outcome, type, reason] = JSON.parse(field) as [string, string, string];
  return { outcome, type, reason };
}
