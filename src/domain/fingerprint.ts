/**
 * Error grouping: the explicit fingerprint when sent; otherwise the
 * exception type plus the in-app frames (module or file, and function);
 * otherwise type and message. The result is a stable hex digest.
 */
import crypto from 'node:crypto';

export interface Frame {
  filename?: string;
  function?: string;
  module?: string;
  in_app?: boolean;
}
export interface ErrorEventShape {
  message?: string;
  fingerprint?: string[];
  exception?: { values: { type?: string; value?: string; stacktrace?: { frames?: Frame[] } }[] };
}

export function groupingParts(event: ErrorEventShape): string[] {
  if (event.fingerprint && event.fingerprint.length > 0) return ['fingerprint', ...event.fingerprint];
  const values = event.exception?.values ?? [];
  // The last value is the outermost exception in Sentry's order.
  const main = values[values.length - 1];
  const type = main?.type ?? 'Error';
  const frames = (main?.stacktrace?.frames ?? []).filter((f) => f.in_app === true);
  if (frames.length > 0) {
    return ['frames', type, ...frames.map((f) => `${f.module || f.filename || '?'}:${f.function || '?'}`)];
  }
  return ['message', type, main?.value ?? event.message ?? ''];
}

export function fingerprintOf(event: ErrorEventShape): string {
  return crypto.createHash('sha256').update(JSON.stringify(groupingParts(event))).digest('hex').slice(0, 32);
}

/** Title and exception type shown on the issue. */
export function describeError(event: ErrorEventShape): { title: string; exception_type: string | null } {
  const values = event.exception?.values ?? [];
  const main = values[values.length - 1];
  if (main) {
    const type = main.type ?? 'Error';
    const title = main.value ? `${type}: ${main.value}` : type;
    return { title: title.slice(0, 256), exception_type: type };
  }
  return { title: (event.message ?? 'Event').slice(0, 256), exception_type: null };
}
