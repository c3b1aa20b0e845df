/**
 * The one normaliser of events, for the native endpoint and Sentry envelopes
 * alike: it takes an event as an SDK sends it (the Sentry event protocol, or
 * a sign-in attempt) and returns the shape Lookout stores. It refuses
 * nothing and drops no field it does not know: it only brings the fields
 * Lookout reads into one form (tags as an object, breadcrumbs as
 * `{values}`, a message object as its text, a level it knows) and trims what
 * is over a limit, noting each cut in `_meta`, keyed by the JSON pointer of
 * what was cut. Wrong types of the fields Lookout reads are left as they are
 * for the schema (schemas/event.json) to name. Scrubbing is separate
 * (./scrub.ts) and runs after.
 */
import net from 'node:net';
import { cutText } from './client-keys.ts';
import { formatLogMessage, LEGACY_INTERFACES, readTimestamp, renameLegacyInterfaces } from './event-repairs.ts';
import { DEFAULT_FINGERPRINT } from './fingerprint.ts';
import { isObj, type Obj } from './obj.ts';


/** Sets a key as the object's own data, so a key `__proto__` sent in JSON stays data and never sets a prototype. */
export function setOwn(obj: Obj, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/**
 * What `_meta` says of one cut or repair: the rule that cut it, and how long (or how many) it was before; a value
 * of the wrong type taken out (`invalid`, with the problem); a legacy interface read under its modern name
 * (`renamed`, with the name).
 */
export interface MetaNote {
  rem: 'trimmed' | 'frames' | 'breadcrumbs' | 'exceptions' | 'depth' | 'size' | 'level' | 'filtered' | 'timestamp' | 'invalid' | 'renamed';
  len?: number;
  value?: string;
}
export type Meta = Record<string, MetaNote>;

export const LIMITS = {
  /** any string anywhere in the event */
  string: 8192,
  /** the fields issues show and filter by */
  type: 256,
  release: 200,
  environment: 64,
  tagKey: 64,
  tagValue: 200,
  /** Sentry keeps 250 frames: the 50 oldest and the 200 nearest the crash */
  framesOldest: 50,
  framesNewest: 200,
  breadcrumbs: 100,
  exceptions: 16,
  tags: 64,
  /** a sign-in attempt's fields (spec 2.6) */
  actor: 256,
  actorId: 128,
  userAgent: 1024,
  outcome: 128,
  /** objects and arrays nest at most this deep; deeper ones become a note */
  depth: 24,
  /** the stored event's JSON; larger ones lose their bulkiest optional parts (see SHRINK) */
  eventBytes: 256 * 1024,
} as const;

export const LEVELS = ['fatal', 'error', 'warning', 'info', 'debug'] as const;
const LEVEL_ALIASES: Record<string, (typeof LEVELS)[number]> = { critical: 'fatal', warn: 'warning', log: 'info', err: 'error' };

const pointer = (path: (string | number)[]) => path.map((p) => `/${String(p).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');

/**
 * Normalises an event (a parsed JSON object) into a new object; the input
 * is not changed. `now` fills a missing timestamp; `clientIp` fills
 * `user.ip_address: "{{auto}}"`; `receivedBytes`, the size of the JSON it was
 * read from, spares measuring an event that cannot be over the size cap.
 */
export function normalizeEvent(input: Obj, opts: { now: Date; clientIp?: string; receivedBytes?: number }): Obj {
  const meta: Meta = isObj(input._meta) ? { ...(input._meta as Meta) } : {};
  const note = (path: (string | number)[], n: MetaNote) => (meta[pointer(path)] = n);
  const event = bounded(input, [], note) as Obj;
  for (const legacy of renameLegacyInterfaces(event)) note([legacy], { rem: 'renamed', value: LEGACY_INTERFACES[legacy] });

  if (event.timestamp === undefined || event.timestamp === null) {
    event.timestamp = opts.now.toISOString();
    note(['timestamp'], { rem: 'timestamp' });
  } else {
    // epoch seconds, or a time without a zone (UTC): one form; anything else is left for the schema to name
    event.timestamp = readTimestamp(event.timestamp) ?? event.timestamp;
  }
  const level = event.level;
  if (typeof level === 'string' && !(LEVELS as readonly string[]).includes(level)) {
    const lower = level.toLowerCase();
    note(['level'], { rem: 'level', value: level });
    event.level = LEVEL_ALIASES[lower] ?? (LEVELS as readonly string[]).find((l) => l === lower) ?? 'error';
  }
  if (isObj(event.message)) {
    // The message interface as an object ({formatted, message, params}): its text is the message, the rest its logentry.
    const logentry = event.message;
    if (event.logentry === undefined || event.logentry === null) event.logentry = logentry;
    event.message = undefined;
    if (typeof logentry.formatted !== 'string' && typeof logentry.message === 'string') event.message = logentry.message;
    if (typeof logentry.formatted === 'string') event.message = logentry.formatted;
  }
  if (isObj(event.logentry)) {
    // A log message with its parameters (Python's logging): formatted as Relay does, and the text of the event.
    const entry = event.logentry;
    if (typeof entry.formatted !== 'string' && typeof entry.message === 'string') {
      const formatted = formatLogMessage(entry.message, entry.params);
      if (formatted !== null) entry.formatted = formatted;
    }
    const text = typeof entry.formatted === 'string' ? entry.formatted : entry.message;
    if ((event.message === undefined || event.message === null) && typeof text === 'string') event.message = text;
  }
  if (Array.isArray(event.exception)) event.exception = { values: event.exception };
  // one exception as the object itself (old raven clients' sentry.interfaces.Exception), as Relay reads it
  else if (isObj(event.exception) && event.exception.values === undefined) {
    const one = event.exception;
    if (['type', 'value', 'stacktrace', 'module'].some((k) => k in one)) event.exception = { values: [one] };
  }
  if (Array.isArray(event.breadcrumbs)) event.breadcrumbs = { values: event.breadcrumbs };
  if (Array.isArray(event.tags)) event.tags = tagsFromPairs(event.tags);
  if (Array.isArray(event.fingerprint)) {
    // `[]` (sentry-ruby sends it always) means the default grouping; `{{default}}` is `{{ default }}` however spaced
    const parts = event.fingerprint.map((f) => (typeof f === 'string' ? f.replace(/^\{\{\s*default\s*\}\}$/i, DEFAULT_FINGERPRINT) : JSON.stringify(f)));
    event.fingerprint = parts.length > 0 ? parts : undefined;
  } else if (event.fingerprint === null) {
    event.fingerprint = undefined;
  }
  if (isObj(event.user) && event.user.ip_address !== undefined) {
    const ip = event.user.ip_address === '{{auto}}' ? opts.clientIp : event.user.ip_address;
    event.user.ip_address = typeof ip === 'string' ? anonymizeIp(ip) : null;
  }

  cut(event, ['release'], LIMITS.release, note);
  cut(event, ['environment'], LIMITS.environment, note);
  if (isObj(event.security)) normalizeSecurity(event.security, note);
  trimTags(event, note);
  trimExceptions(event, note);
  trimBreadcrumbs(event, note);
  // Trimming only shortens, so an event read from fewer bytes than the cap (less room for the notes) fits.
  if (opts.receivedBytes === undefined || opts.receivedBytes > LIMITS.eventBytes - 16 * 1024) shrinkToFit(event, note);

  for (const key of Object.keys(event)) if (event[key] === undefined) delete event[key];
  delete event._meta;
  if (Object.keys(meta).length > 0) event._meta = meta;
  return event;
}

/**
 * A sign-in attempt's fields: its address in one form (an IPv4-mapped IPv6 address read as IPv4, IPv6 lowercase
 * and zero-compressed; anything else left for the schema to refuse), its actor and the rest kept as sent, cut to
 * their limits.
 */
function normalizeSecurity(security: Obj, note: (path: (string | number)[], n: MetaNote) => void): void {
  if (typeof security.ip === 'string') security.ip = normalizeIp(security.ip) ?? security.ip;
  cut(security, ['security', 'actor'], LIMITS.actor, note);
  cut(security, ['security', 'actor_id'], LIMITS.actorId, note);
  cut(security, ['security', 'user_agent'], LIMITS.userAgent, note);
  cut(security, ['security', 'outcome'], LIMITS.outcome, note);
}

/** An IP address in its one written form (above), or null when the text is not one. */
export function normalizeIp(ip: string): string | null {
  if (net.isIPv4(ip)) return ip;
  if (!net.isIPv6(ip) || ip.includes('%')) return null;
  const host = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (!mapped) return host;
  const [high, low] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/**
 * An end user's address, made anonymous before it is stored (docs/decisions.md): an IPv4 address loses
 * its last byte, an IPv6 address all but its first 48 bits. Anything else is not an address and is dropped.
 */
export function anonymizeIp(ip: string): string | null {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (v4) return v4.slice(1, 4).some((b) => Number(b) > 255) ? null : `${v4[1]}.${v4[2]}.${v4[3]}.0`;
  if (!/^[0-9a-f:.]+$/i.test(ip) || !ip.includes(':')) return null;
  const [head = '', tail] = ip.toLowerCase().split('::');
  const groups = head.split(':').filter(Boolean);
  if (tail === undefined && groups.length < 3) return null;
  while (groups.length < 3) groups.push('0');
  return `${groups.slice(0, 3).join(':')}::`;
}

/**
 * A copy with every string cut to LIMITS.string and nesting cut at LIMITS.depth, each cut noted. A value's path
 * is built only for a container or a note: this runs over every value of every event.
 */
function bounded(value: unknown, path: (string | number)[], note: (path: (string | number)[], n: MetaNote) => void): unknown {
  if (typeof value === 'string') {
    if (value.length <= LIMITS.string) return value;
    note(path, { rem: 'trimmed', len: value.length });
    return `${cutText(value, LIMITS.string - 1)}…`;
  }
  if (value === null || typeof value !== 'object') return value;
  if (path.length >= LIMITS.depth) {
    note(path, { rem: 'depth' });
    return '[…]';
  }
  const child = (inner: unknown, key: string | number) =>
    typeof inner === 'object' || (typeof inner === 'string' && inner.length > LIMITS.string) ? bounded(inner, [...path, key], note) : inner;
  if (Array.isArray(value)) return value.map(child);
  const out: Obj = {};
  for (const key of Object.keys(value)) setOwn(out, key, child((value as Obj)[key], key));
  return out;
}

function cut(obj: Obj, path: (string | number)[], max: number, note: (path: (string | number)[], n: MetaNote) => void): void {
  const key = path[path.length - 1]!;
  const value = obj[key];
  if (typeof value === 'string' && value.length > max) {
    note(path, { rem: 'trimmed', len: value.length });
    obj[key] = cutText(value, max);
  }
}

/** Tags sent as `[[key, value], ...]` → an object; a value that is not a string is written as JSON. */
function tagsFromPairs(pairs: unknown[]): Obj {
  const out: Obj = {};
  for (const pair of pairs) {
    if (Array.isArray(pair) && pair.length === 2 && typeof pair[0] === 'string') setOwn(out, pair[0], pair[1]);
  }
  return out;
}

function trimTags(event: Obj, note: (path: (string | number)[], n: MetaNote) => void): void {
  if (!isObj(event.tags)) return;
  const entries = Object.entries(event.tags);
  if (entries.length > LIMITS.tags) note(['tags'], { rem: 'trimmed', len: entries.length });
  const tags: Obj = {};
  for (const [key, value] of entries.slice(0, LIMITS.tags)) {
    if (key.length > LIMITS.tagKey) note(['tags', key], { rem: 'trimmed', len: key.length });
    const text = typeof value === 'string' ? value : value === null || value === undefined ? '' : JSON.stringify(value);
    if (text.length > LIMITS.tagValue) note(['tags', key], { rem: 'trimmed', len: text.length });
    setOwn(tags, cutText(key, LIMITS.tagKey), cutText(text, LIMITS.tagValue));
  }
  event.tags = tags;
}

function trimExceptions(event: Obj, note: (path: (string | number)[], n: MetaNote) => void): void {
  if (!isObj(event.exception) || !Array.isArray(event.exception.values)) return;
  let values = event.exception.values as unknown[];
  if (values.length > LIMITS.exceptions) {
    // The outermost exceptions (the last ones) are the ones raised: keep those.
    note(['exception', 'values'], { rem: 'exceptions', len: values.length });
    values = values.slice(-LIMITS.exceptions);
    event.exception.values = values;
  }
  values.forEach((value, i) => {
    if (!isObj(value)) return;
    cut(value, ['exception', 'values', i, 'type'], LIMITS.type, (p, n) => note(p, n));
    const stack = value.stacktrace;
    if (!isObj(stack) || !Array.isArray(stack.frames)) return;
    const frames = stack.frames;
    if (frames.length > LIMITS.framesOldest + LIMITS.framesNewest) {
      note(['exception', 'values', i, 'stacktrace', 'frames'], { rem: 'frames', len: frames.length });
      stack.frames = [...frames.slice(0, LIMITS.framesOldest), ...frames.slice(-LIMITS.framesNewest)];
    }
  });
}

function trimBreadcrumbs(event: Obj, note: (path: (string | number)[], n: MetaNote) => void): void {
  if (!isObj(event.breadcrumbs) || !Array.isArray(event.breadcrumbs.values)) return;
  const values = event.breadcrumbs.values;
  if (values.length <= LIMITS.breadcrumbs) return;
  note(['breadcrumbs', 'values'], { rem: 'breadcrumbs', len: values.length });
  event.breadcrumbs.values = values.slice(-LIMITS.breadcrumbs); // the newest are last
}

/**
 * What goes when the event is still over LIMITS.eventBytes, in this order,
 * until it fits: what helps debugging least first. Each step is noted.
 */
const SHRINK: { path: (string | number)[]; apply: (event: Obj) => boolean }[] = [
  { path: ['modules'], apply: (e) => drop(e, 'modules') },
  { path: ['extra'], apply: (e) => drop(e, 'extra') },
  { path: ['request', 'data'], apply: (e) => isObj(e.request) && drop(e.request, 'data') },
  { path: ['breadcrumbs'], apply: (e) => forBreadcrumbs(e, (b) => drop(b, 'data')) },
  { path: ['exception', 'frames', 'vars'], apply: (e) => forFrames(e, (f) => f.in_app !== true && drop(f, 'vars')) },
  { path: ['exception', 'frames', 'vars'], apply: (e) => forFrames(e, (f) => drop(f, 'vars')) },
  { path: ['exception', 'frames', 'context'], apply: (e) => forFrames(e, (f) => drop(f, 'pre_context') && drop(f, 'post_context')) },
  { path: ['contexts'], apply: (e) => drop(e, 'contexts') },
  { path: ['breadcrumbs'], apply: (e) => drop(e, 'breadcrumbs') },
  { path: ['request'], apply: (e) => drop(e, 'request') },
];

function drop(obj: Obj, key: string): boolean {
  if (!(key in obj)) return false;
  delete obj[key];
  return true;
}
function forFrames(event: Obj, fn: (frame: Obj) => boolean): boolean {
  let changed = false;
  const values = isObj(event.exception) && Array.isArray(event.exception.values) ? event.exception.values : [];
  for (const value of values) {
    const frames = isObj(value) && isObj(value.stacktrace) && Array.isArray(value.stacktrace.frames) ? value.stacktrace.frames : [];
    for (const frame of frames) if (isObj(frame) && fn(frame)) changed = true;
  }
  return changed;
}
function forBreadcrumbs(event: Obj, fn: (crumb: Obj) => boolean): boolean {
  let changed = false;
  const values = isObj(event.breadcrumbs) && Array.isArray(event.breadcrumbs.values) ? event.breadcrumbs.values : [];
  for (const crumb of values) if (isObj(crumb) && fn(crumb)) changed = true;
  return changed;
}

function shrinkToFit(event: Obj, note: (path: (string | number)[], n: MetaNote) => void): void {
  let size = Buffer.byteLength(JSON.stringify(event));
  for (const step of SHRINK) {
    if (size <= LIMITS.eventBytes) return;
    if (step.apply(event)) {
      note(step.path, { rem: 'size', len: size });
      size = Buffer.byteLength(JSON.stringify(event));
    }
  }
}
