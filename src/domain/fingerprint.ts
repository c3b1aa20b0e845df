/**
 * Error grouping: the explicit fingerprint when sent; otherwise the
 * exception type plus the in-app frames (module or file, and function);
 * otherwise type and message. The result is a stable hex digest.
 */
import crypto from 'node:crypto';
import { cutText } from './client-keys.ts';
import { CSP_KIND } from './csp.ts';

export interface Frame {
  filename?: string;
  function?: string;
  module?: string;
  in_app?: boolean;
}
interface Stacktrace {
  frames?: (Frame | null)[] | null;
}
export interface ErrorEventShape {
  message?: string;
  transaction?: string;
  fingerprint?: string[];
  exception?: { values: { type?: string; value?: string; stacktrace?: Stacktrace | null }[] };
  /** a browser's CSP violation (./csp.ts): its issue is a security issue of the `csp` kind */
  csp?: { document_uri?: string | null } | null;
  /** a message event's stack (attach_stacktrace), or its threads' (the crashed or current thread's counts) */
  stacktrace?: Stacktrace | null;
  threads?: { values?: ({ crashed?: boolean; current?: boolean; stacktrace?: Stacktrace | null } | null)[] | null } | null;
}

/** The frames an event is grouped and placed by: its outermost exception's, else its own or its thread's stack. */
function framesOf(event: ErrorEventShape): Frame[] {
  const values = event.exception?.values ?? [];
  const stack = values.length > 0 ? values[values.length - 1]?.stacktrace : (event.stacktrace ?? threadStack(event));
  return (stack?.frames ?? []).filter((f): f is Frame => f !== null && typeof f === 'object');
}
function threadStack(event: ErrorEventShape): Stacktrace | null | undefined {
  const threads = (event.threads?.values ?? []).filter((t) => t?.stacktrace);
  return (threads.find((t) => t!.crashed) ?? threads.find((t) => t!.current) ?? threads[0])?.stacktrace;
}

/** Sentry's placeholder in a fingerprint for the default grouping. */
export const DEFAULT_FINGERPRINT = '{{ default }}';

export function groupingParts(event: ErrorEventShape): string[] {
  const fingerprint = event.fingerprint ?? [];
  if (fingerprint.length === 1 && fingerprint[0] === DEFAULT_FINGERPRINT) return defaultParts(event);
  if (fingerprint.length > 0) return ['fingerprint', ...fingerprint.flatMap((f) => (f === DEFAULT_FINGERPRINT ? defaultParts(event) : [f]))];
  return defaultParts(event);
}

/** The exception type plus the in-app frames; otherwise type and message. */
function defaultParts(event: ErrorEventShape): string[] {
  const values = event.exception?.values ?? [];
  // The last value is the outermost exception in Sentry's order.
  const main = values[values.length - 1];
  const type = main?.type ?? 'Error';
  const frames = framesOf(event).filter((f) => f.in_app === true);
  if (frames.length > 0) {
    // a message event with a stack is grouped by where it was sent from, as Sentry groups it
    return ['frames', main ? type : 'message', ...frames.map((f) => `${f.module || f.filename || '?'}:${f.function || '?'}`)];
  }
  return ['message', type, main?.value ?? event.message ?? ''];
}

export function fingerprintOf(event: ErrorEventShape): string {
  return crypto.hash('sha256', JSON.stringify(groupingParts(event))).slice(0, 32);
}

/**
 * Title, culprit and exception type shown on the issue. The culprit is
 * where it happened: the crashing in-app frame (else the crashing frame) as
 * `module or file in function`, else the event's transaction.
 */
export function describeError(event: ErrorEventShape): { title: string; culprit: string; exception_type: string | null } {
  const values = event.exception?.values ?? [];
  const main = values[values.length - 1];
  const frames = framesOf(event);
  const frame = [...frames].reverse().find((f) => f.in_app === true) ?? frames[frames.length - 1];
  const where = frame ? [frame.module || frame.filename, frame.function].filter(Boolean).join(' in ') : '';
  const culprit = cutText(where || event.transaction || event.csp?.document_uri || '', 256);
  if (event.csp) return { title: cutText(event.message ?? 'CSP violation', 256), culprit, exception_type: CSP_KIND };
  if (main) {
    const type = main.type ?? 'Error';
    const title = main.value ? `${type}: ${main.value}` : type;
    return { title: cutText(title, 256), culprit, exception_type: type };
  }
  return { title: cutText(event.message ?? 'Event', 256), culprit, exception_type: null };
}
