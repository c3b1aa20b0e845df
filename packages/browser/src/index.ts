/**
 * @lookout/browser: release-health sessions for a web page, the way Sentry's
 * browser SDK tracks them. A page load starts a session; a captured error
 * marks it errored, an unhandled error or rejection marks it crashed; the
 * session is sent when the page is hidden or left, with navigator.sendBeacon
 * (text/plain, the public key in `?key=`) or else fetch with keepalive.
 * Without a release nothing is sent (spec 4.4).
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

/** Starts Lookout on this page. Calling it again replaces the options and starts a new session. */
export function init(options: InitOptions): void {
  state = null;
  if (!options.release || options.autoSessionTracking === false) return;
  state = {
    url: `${options.baseUrl.replace(/\/+$/, '')}/api/v1/sessions?key=${encodeURIComponent(options.publicKey)}`,
    release: options.release,
    environment: options.environment,
    sid: uuid(),
    started: new Date().toISOString(),
    status: 'ok',
    errors: 0,
  };
  if (listening) return;
  listening = true;
  addEventListener('error', () => mark('crashed'));
  addEventListener('unhandledrejection', () => mark('crashed'));
  addEventListener('pagehide', send);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'hidden') send();
  });
}

/** A handled error: the page's session counts as errored (a crash stays a crash). */
export function captureException(_error?: unknown): void {
  if (!state) return;
  state.errors++;
  mark('errored');
}

/** Sends the session now (it is also sent when the page is hidden or left). */
export function flush(): void {
  send();
}
