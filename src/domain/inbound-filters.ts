/**
 * Inbound filters per project (issue 51), as Sentry's: error events that no one will act on are counted as
 * filtered and never stored. Each filter reads the event as normalised (src/domain/error-event.ts):
 * - `browser_extensions`: the first exception's value is one extensions and injected scripts are known to throw,
 *   or its last frame is a file of an extension (`chrome-extension://`, `moz-extension://`, ...);
 * - `localhost`: the user's address is a loopback one, or the request's URL is on localhost;
 * - `legacy_browsers`: the browser (contexts, else the request's User-Agent) is older than the versions below;
 * - `releases`: the event's release matches one of the globs;
 * - `error_messages`: its message, an exception's type, value, or `type: value` matches one of the globs.
 * Globs are picomatch's with `*` crossing `/` (bash mode), case-insensitive for messages.
 */
import picomatch from 'picomatch';
import { userAgent } from './event-impact.ts';
import { isObj, type Obj } from './obj.ts';
import { parseUserAgent } from './user-agent.ts';
import type { InboundFilters as InboundFiltersAnswer } from '../generated/schema-types.ts';

/** A project's inbound filters: schemas/answers/inbound-filters.json, each field documented there. */
export type InboundFilters = InboundFiltersAnswer;

/** Off until an owner turns them on: a filter drops events, and nobody should lose one without having asked. */
export const DEFAULT_FILTERS: InboundFilters = { browser_extensions: false, localhost: false, legacy_browsers: false, releases: [], error_messages: [] };

export function filtersOf(stored: Partial<InboundFilters> | undefined, set: Partial<InboundFilters> = {}): InboundFilters {
  return { ...DEFAULT_FILTERS, ...stored, ...set };
}

export type FilterReason = 'browser_extensions' | 'localhost' | 'legacy_browsers' | 'release' | 'error_message';

/** Messages browser extensions and injected scripts throw (Sentry's list, as Relay's browser-extension filter has it). */
const EXTENSION_VALUES =
  /top\.GLOBALS|originalCreateNotification|canvas\.contentDocument|MyApp_RemoveAllHighlights|http:\/\/tt\.epicplay\.com|Can't find variable: ZiteReader|jigsaw is not defined|ComboSearch is not defined|http:\/\/loading\.retry\.widdit\.com\/|atomicFindClose|fb_xd_fragment|bmi_SafeAddOnload|EBCallBackMessageReceived|conduitPage|plugin\.setSuspendState is not a function|Extension context invalidated|webkit-masked-url:|window\.ethereum|__gCrWeb|vid_mate_check|ezLinkPreviewExtension/i;
/** Files of extensions and of scripts pages never serve themselves. */
const EXTENSION_SOURCES =
  /^(chrome|chrome-extension|moz-extension|safari-extension|safari-web-extension|ms-browser-extension|edge-extension|resource|webkit-masked-url):\/\/|graph\.facebook\.com|connect\.facebook\.net|eatdifferent\.com\.woopra-ns\.com|static\.woopra\.com\/js\/woopra\.js/i;

/** The oldest version of each browser that is not legacy (older is filtered: EdgeHTML is Edge 12–18); Internet Explorer all. */
const CURRENT_FROM: Record<string, number> = {
  Chrome: 69,
  'Chrome WebView': 69,
  'Mobile Chrome': 69,
  Firefox: 67,
  'Mobile Firefox': 67,
  Safari: 12,
  'Mobile Safari': 12,
  Opera: 50,
  'Opera Mini': 8,
  'Android Browser': 4,
  Edge: 79,
};
const ALWAYS_LEGACY = new Set(['IE', 'IEMobile']);

const LOOPBACK_IP = /^(127\.|::1$|0:0:0:0:0:0:0:1$|::ffff:127\.)/i;
const LOCAL_HOSTS = /^(localhost|127\.0\.0\.1|\[::1\]|.*\.localhost)$/i;

/** The first filter of the project's that drops the event, or null when it is kept. */
export function filteredBy(event: Obj, filters: InboundFilters): FilterReason | null {
  if (filters.browser_extensions && fromExtension(event)) return 'browser_extensions';
  if (filters.localhost && fromLocalhost(event)) return 'localhost';
  if (filters.legacy_browsers && fromLegacyBrowser(event)) return 'legacy_browsers';
  if (filters.releases.length > 0 && typeof event.release === 'string' && matcher(filters.releases, false)(event.release)) return 'release';
  if (filters.error_messages.length > 0) {
    const matches = matcher(filters.error_messages, true);
    if (messageTexts(event).some((t) => matches(t))) return 'error_message';
  }
  return null;
}

/** Compiled globs, kept per list (a project's lists change seldom; the cache forgets beyond a bound). */
const compiled = new Map<string, (text: string) => boolean>();
function matcher(globs: string[], nocase: boolean): (text: string) => boolean {
  const key = `${nocase}\n${globs.join('\n')}`;
  let m = compiled.get(key);
  if (!m) {
    if (compiled.size >= 1000) compiled.clear();
    m = picomatch(globs, { bash: true, dot: true, nocase });
    compiled.set(key, m);
  }
  return m;
}

function exceptions(event: Obj): Obj[] {
  const values = isObj(event.exception) ? event.exception.values : undefined;
  return Array.isArray(values) ? values.filter(isObj) : [];
}

function fromExtension(event: Obj): boolean {
  const first = exceptions(event)[0];
  if (!first) return false;
  if (typeof first.value === 'string' && EXTENSION_VALUES.test(first.value)) return true;
  const frames = isObj(first.stacktrace) && Array.isArray(first.stacktrace.frames) ? first.stacktrace.frames.filter(isObj) : [];
  const last = frames.at(-1); // the innermost frame: where it was thrown
  const source = last && (typeof last.abs_path === 'string' ? last.abs_path : typeof last.filename === 'string' ? last.filename : null);
  return typeof source === 'string' && EXTENSION_SOURCES.test(source);
}

function fromLocalhost(event: Obj): boolean {
  const ip = isObj(event.user) ? event.user.ip_address : undefined;
  if (typeof ip === 'string' && LOOPBACK_IP.test(ip)) return true;
  const url = isObj(event.request) ? event.request.url : undefined;
  if (typeof url !== 'string') return false;
  try {
    return LOCAL_HOSTS.test(new URL(url).hostname);
  } catch {
    return false;
  }
}

function fromLegacyBrowser(event: Obj): boolean {
  const browser = isObj(event.contexts) && isObj(event.contexts.browser) ? event.contexts.browser : {};
  let name = typeof browser.name === 'string' ? browser.name : null;
  let version = typeof browser.version === 'string' ? browser.version : null;
  if (name === null || version === null) {
    const ua = userAgent(event);
    if (ua === null) return false;
    const parsed = parseUserAgent(ua).browser;
    name = parsed.name ?? null;
    version = parsed.version ?? null;
  }
  if (name === null) return false;
  if (ALWAYS_LEGACY.has(name)) return true;
  const from = CURRENT_FROM[name];
  const major = Number.parseInt(version ?? '', 10);
  return from !== undefined && Number.isFinite(major) && major < from;
}

/** The texts the message globs are matched against. */
function messageTexts(event: Obj): string[] {
  const texts: string[] = [];
  const message = event.message;
  if (typeof message === 'string') texts.push(message);
  else if (isObj(message) && typeof message.formatted === 'string') texts.push(message.formatted);
  const logentry = isObj(event.logentry) ? event.logentry.formatted ?? event.logentry.message : undefined;
  if (typeof logentry === 'string') texts.push(logentry);
  for (const e of exceptions(event)) {
    const type = typeof e.type === 'string' ? e.type : null;
    const value = typeof e.value === 'string' ? e.value : null;
    if (type) texts.push(type);
    if (value) texts.push(value);
    if (type && value) texts.push(`${type}: ${value}`);
  }
  return texts;
}
