/**
 * What old and odd SDKs send, read as Relay reads it (issue 46): the legacy
 * interface names, timestamps without a zone, log messages with their
 * parameters, `NaN` in Python's JSON. Pure functions the normaliser
 * (./error-event.ts) and the body reader call.
 */
import type { Obj } from './obj.ts';

/** The legacy names of the event interfaces (raven clients), as Relay maps them; the modern name wins when both come. */
export const LEGACY_INTERFACES: Readonly<Record<string, string>> = {
  'sentry.interfaces.Exception': 'exception',
  'sentry.interfaces.Stacktrace': 'stacktrace',
  'sentry.interfaces.Message': 'logentry',
  'sentry.interfaces.Http': 'request',
  'sentry.interfaces.User': 'user',
  'sentry.interfaces.Template': 'template',
  'sentry.interfaces.Breadcrumbs': 'breadcrumbs',
  'sentry.interfaces.Contexts': 'contexts',
  'sentry.interfaces.Threads': 'threads',
  'sentry.interfaces.DebugMeta': 'debug_meta',
  'sentry.interfaces.Csp': 'csp',
};

/** Renames the legacy interfaces of an event in place; returns the names it renamed. */
export function renameLegacyInterfaces(event: Obj): string[] {
  const renamed: string[] = [];
  for (const [legacy, modern] of Object.entries(LEGACY_INTERFACES)) {
    if (!(legacy in event)) continue;
    if (event[modern] === undefined || event[modern] === null) event[modern] = event[legacy];
    delete event[legacy];
    renamed.push(legacy);
  }
  return renamed;
}

/**
 * A timestamp as an RFC 3339 time in UTC, or null when it is none. Epoch seconds (a number or a numeric string);
 * an ISO time with or without a zone (without: UTC, as Sentry reads raven's), with `T` or a space between date
 * and time, with any number of fraction digits.
 */
export function readTimestamp(value: unknown): string | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? epochIso(value) : null;
  if (typeof value !== 'string') return null;
  if (RFC3339.test(value)) return value; // kept as sent, microseconds and zone
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return epochIso(Number(text));
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/i.exec(text);
  if (!m) return null;
  const zone = m[4] ? (m[4].toUpperCase() === 'Z' ? 'Z' : m[4].replace(/^([+-]\d{2})(\d{2})$/, '$1:$2')) : 'Z';
  const time = m[2]!.length === 5 ? `${m[2]}:00` : m[2]!;
  const ms = m[3] ? m[3].slice(0, 4).padEnd(4, '0') : '';
  const at = new Date(`${m[1]}T${time}${ms}${zone}`);
  return Number.isNaN(at.getTime()) ? null : at.toISOString();
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

function epochIso(seconds: number): string | null {
  const at = new Date(seconds * 1000);
  return Number.isNaN(at.getTime()) ? null : at.toISOString();
}

/**
 * A log message with its parameters applied, as Relay formats `logentry`: printf style (`%s`, `%d`, `%i`, `%f`,
 * `%r`, `%x`, `%o`, `%%`; `%(name)s` takes a parameter by name) or brace style (`{}` in turn, `{0}` by position,
 * `{name}` by name). A placeholder with no parameter stays as written; null when nothing was applied.
 */
export function formatLogMessage(message: string, params: unknown): string | null {
  const list = Array.isArray(params) ? params : [];
  const named = params !== null && typeof params === 'object' && !Array.isArray(params) ? (params as Obj) : {};
  if (list.length === 0 && Object.keys(named).length === 0) return null;
  const show = (v: unknown) => (typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v));
  let next = 0;
  let applied = false;
  const take = (key: string | undefined, whole: string): string => {
    if (key === undefined) {
      if (next >= list.length) return whole;
      applied = true;
      return show(list[next++]);
    }
    if (/^\d+$/.test(key) && Number(key) < list.length) {
      applied = true;
      return show(list[Number(key)]);
    }
    if (Object.hasOwn(named, key)) {
      applied = true;
      return show(named[key]);
    }
    return whole;
  };
  let out: string;
  if (/%[-#0 +]*\d*(?:\.\d+)?[sdifrxXoeEgGc]|%\([^)]+\)/.test(message)) {
    out = message.replace(/%%|%(?:\(([^)]+)\))?[-#0 +]*\d*(?:\.\d+)?([sdifrxXoeEgGc])/g, (whole, name: string | undefined) => (whole === '%%' ? '%' : take(name, whole)));
  } else {
    out = message.replace(/\{\{|\}\}|\{([A-Za-z0-9_]*)(?:[:!][^{}]*)?\}/g, (whole, key: string) => (whole === '{{' ? '{' : whole === '}}' ? '}' : take(key === '' ? undefined : key, whole)));
  }
  return applied ? out : null;
}

/**
 * JSON text as Python's clients write it, made JSON: `NaN`, `Infinity` and `-Infinity` outside strings become
 * `null` (Relay repairs them too). Returns the text unchanged when it holds none.
 */
export function repairPythonJson(text: string): string {
  if (!/NaN|Infinity/.test(text)) return text;
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      out += c;
    } else if (text.startsWith('NaN', i)) {
      out += 'null';
      i += 2;
    } else if (text.startsWith('-Infinity', i)) {
      out += 'null';
      i += 8;
    } else if (text.startsWith('Infinity', i)) {
      out += 'null';
      i += 7;
    } else {
      out += c;
    }
  }
  return out;
}
