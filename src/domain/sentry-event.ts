/**
 * A Sentry error event (an envelope's `event` item) → Lookout's error event
 * (schemas/event.json). Only the fields Lookout groups and shows are kept;
 * the rest of the SDK's payload (breadcrumbs, contexts, request, user, ...)
 * is dropped, and long strings are cut to the schema's limits. Security
 * fields are never taken from here: sign-in attempts need the secret key.
 */
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const cut = (v: unknown, max: number): string | undefined => (typeof v === 'string' && v.length > 0 ? v.slice(0, max) : undefined);
const LEVELS = ['fatal', 'error', 'warning', 'info', 'debug'];
const MAX_FRAMES = 100;
const MAX_EXCEPTIONS = 10;

function compact<T extends Obj>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function timestampOf(value: unknown, fallback: Date): string {
  if (typeof value === 'number' && Number.isFinite(value)) return new Date(value * 1000).toISOString();
  if (typeof value === 'string' && !Number.isNaN(Date.parse(value))) return new Date(value).toISOString();
  return fallback.toISOString();
}

function frameOf(frame: unknown): Obj | undefined {
  if (!isObj(frame)) return undefined;
  return compact({
    filename: cut(frame.filename, 1024),
    function: cut(frame.function, 512),
    module: cut(frame.module, 512),
    lineno: Number.isInteger(frame.lineno) && (frame.lineno as number) >= 0 ? frame.lineno : undefined,
    in_app: typeof frame.in_app === 'boolean' ? frame.in_app : undefined,
  });
}

export function fromSentryEvent(event: Obj, now: Date): Obj {
  const values = isObj(event.exception) && Array.isArray(event.exception.values) ? event.exception.values : [];
  const exceptions = values
    .filter(isObj)
    .slice(-MAX_EXCEPTIONS)
    .map((v) => {
      const frames = isObj(v.stacktrace) && Array.isArray(v.stacktrace.frames) ? v.stacktrace.frames.slice(-MAX_FRAMES).map(frameOf).filter(Boolean) : [];
      return compact({ type: cut(v.type, 256) ?? 'Error', value: cut(v.value, 8192), ...(frames.length ? { stacktrace: { frames } } : {}) });
    });
  const message = cut(event.message, 8192) ?? (isObj(event.message) ? cut(event.message.formatted ?? event.message.message, 8192) : undefined) ?? (isObj(event.logentry) ? cut(event.logentry.formatted ?? event.logentry.message, 8192) : undefined);
  const tags = isObj(event.tags)
    ? Object.fromEntries(Object.entries(event.tags).filter(([k, v]) => typeof v === 'string' && /^[A-Za-z0-9_.:-]{1,64}$/.test(k) && !k.includes('.')).slice(0, 50).map(([k, v]) => [k, (v as string).slice(0, 200)]))
    : undefined;
  // `{{ default }}` asks for the default grouping, which is what Lookout does without a fingerprint.
  const fingerprint = Array.isArray(event.fingerprint) && !event.fingerprint.includes('{{ default }}')
    ? event.fingerprint.filter((f): f is string => typeof f === 'string' && f.length > 0).slice(0, 16).map((f) => f.slice(0, 256))
    : undefined;
  const sdk = isObj(event.sdk) ? compact({ name: cut(event.sdk.name, 128), version: cut(event.sdk.version, 64) }) : undefined;
  return compact({
    event_id: typeof event.event_id === 'string' ? event.event_id.toLowerCase().replace(/-/g, '') : undefined,
    timestamp: timestampOf(event.timestamp, now),
    platform: cut(event.platform, 64),
    level: typeof event.level === 'string' && LEVELS.includes(event.level) ? event.level : 'error',
    release: cut(event.release, 200),
    environment: cut(event.environment, 64),
    message: exceptions.length === 0 ? (message ?? 'event without message') : message,
    exception: exceptions.length ? { values: exceptions } : undefined,
    tags: tags && Object.keys(tags).length ? tags : undefined,
    fingerprint: fingerprint?.length ? fingerprint : undefined,
    sdk,
  });
}
