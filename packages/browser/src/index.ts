/**
 * @lookout/browser: release-health sessions for a web page, the way Sentry's
 * browser SDK tracks them. A page load starts a session; a captured error
 * marks it errored, an unhandled error or rejection marks it crashed; the
 * session is sent when the page is hidden or left, with navigator.sendBeacon
 * (text/plain, the public key in `?key=`) or else fetch with keepalive.
 * Without a release no session is sent (spec 4.4).
 *
 * Each captured or unhandled error is also sent as an error event to Sentry's
 * store endpoint with the public key, its stack parsed from the browser's and
 * the debug IDs `sentry-cli sourcemaps inject` registered on the page in its
 * `debug_meta`, so Lookout maps its frames through uploaded source maps.
 */

export interface InitOptions {
  /** where Lookout answers, e.g. https://lookout.example.com */
  baseUrl: string;
  /** the project's public key (never the secret key) */
  publicKey: string;
  /** the release this page belongs to; without it no session is sent */
  release?: string;
  environment?: string;
  /** start a session on page load and send it on pagehide (default true) */
  autoSessionTracking?: boolean;
  /** send captured and unhandled errors as error events (default true) */
  sendErrors?: boolean;
}

type Status = 'ok' | 'errored' | 'crashed';

interface State {
  url: string;
  release: string;
  environment?: string;
  sid: string;
  started: string;
  status: Status;
  errors: number;
  /** the status last sent, so a page hidden twice without change sends once */
  sent?: string;
}

let state: State | null = null;
let options: InitOptions | null = null;
let listening = false;

function uuid(): string {
  if (typeof crypto !== 'undefined' && 'randomUUID' in crypto) return crypto.randomUUID();
  return 'xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx'.replace(/[xy]/g, (c) => {
    const r = (Math.random() * 16) | 0;
    return (c === 'x' ? r : (r & 3) | 8).toString(16);
  });
}

function send(): void {
  if (!state) return;
  const mark = `${state.status}:${state.errors}`;
  if (state.sent === mark) return;
  state.sent = mark;
  const body = JSON.stringify({
    sid: state.sid,
    release: state.release,
    environment: state.environment,
    status: state.status,
    errors: state.errors,
    started: state.started,
  });
  try {
    if (navigator.sendBeacon && navigator.sendBeacon(state.url, body)) return;
  } catch {
    /* fall back to fetch */
  }
  void fetch(state.url, { method: 'POST', body, keepalive: true, headers: { 'content-type': 'text/plain' } }).catch(() => {});
}

function mark(status: Status): void {
  if (!state) return;
  if (status === 'crashed' || state.status === 'ok') state.status = status;
}

interface Frame {
  function: string;
  abs_path: string;
  filename: string;
  lineno: number;
  colno: number;
  in_app: boolean;
}

/** The frames of a stack as Chromium (`at f (url:1:2)`), Firefox and Safari (`f@url:1:2`) write it, outermost first. */
function framesOf(stack: string): Frame[] {
  const frames: Frame[] = [];
  for (const line of stack.split('\n')) {
    const m = /^\s*at (?:(.*?) \()?(.+?):(\d+):(\d+)\)?$/.exec(line) || /^\s*(.*?)@(.+?):(\d+):(\d+)$/.exec(line);
    if (m) frames.push({ function: m[1] || '?', abs_path: m[2]!, filename: m[2]!, lineno: +m[3]!, colno: +m[4]!, in_app: true });
  }
  return frames.reverse();
}

/** The debug ID of each file `sentry-cli sourcemaps inject` registered (`_sentryDebugIds`, by a stack from the file). */
function debugIds(): Record<string, string> {
  const out: Record<string, string> = {};
  const registered = (globalThis as { _sentryDebugIds?: Record<string, string> })._sentryDebugIds ?? {};
  for (const stack of Object.keys(registered)) {
    const file = framesOf(stack)[0]?.abs_path;
    if (file) out[file] = registered[stack]!;
  }
  return out;
}

/** Sends an error as an event (Sentry's store endpoint, the public key in the query: no preflight, no secret). */
function report(error: unknown, handled: boolean): void {
  if (!options || options.sendErrors === false) return;
  const err = error instanceof Error ? error : new Error(String(error));
  const frames = framesOf(err.stack || '');
  const ids = debugIds();
  const images = [...new Set(frames.map((f) => f.abs_path))].filter((f) => ids[f]).map((f) => ({ type: 'sourcemap', code_file: f, debug_id: ids[f] }));
  const event = {
    event_id: uuid().replace(/-/g, ''),
    timestamp: Date.now() / 1000,
    platform: 'javascript',
    level: 'error',
    release: options.release,
    environment: options.environment,
    exception: { values: [{ type: err.name, value: err.message, stacktrace: frames.length ? { frames } : undefined, mechanism: { type: handled ? 'generic' : 'onerror', handled } }] },
    request: { url: location.href, headers: { 'User-Agent': navigator.userAgent } },
    debug_meta: images.length ? { images } : undefined,
    sdk: { name: 'lookout.browser', version: '0.1.0' },
  };
  const url = `${options.baseUrl.replace(/\/+$/, '')}/api/store/?sentry_key=${encodeURIComponent(options.publicKey)}&sentry_version=7`;
  void fetch(url, { method: 'POST', body: JSON.stringify(event), keepalive: true, mode: 'no-cors', headers: { 'content-type': 'text/plain' } }).catch(() => {});
}

/** Starts Lookout on this page. Calling it again replaces the options and starts a new session. */
export function init(opts: InitOptions): void {
  options = opts;
  state = null;
  listen();
  if (!opts.release || opts.autoSessionTracking === false) return;
  state = {
    url: `${opts.baseUrl.replace(/\/+$/, '')}/api/v1/sessions?key=${encodeURIComponent(opts.publicKey)}`,
    release: opts.release,
    environment: opts.environment,
    sid: uuid(),
    started: new Date().toISOString(),
    status: 'ok',
    errors: 0,
  };
}

function listen(): void {
  if (listening) return;
  listening = true;
  addEventListener('error', (e) => {
    mark('crashed');
    report(e.error ?? e.message, false);
  });
  addEventListener('unhandledrejection', (e) => {
    mark('crashed');
    report(e.reason, false);
  });
  addEventListener('pagehide', send);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') send();
  });
}

/** A handled error: sent as an error event, and the page's session counts as errored (a crash stays a crash). */
export function captureException(error?: unknown): void {
  report(error, true);
  if (!state) return;
  state.errors++;
  mark('errored');
}

/** Sends the session now (it is also sent when the page is hidden or left). */
export function flush(): void {
  send();
}
