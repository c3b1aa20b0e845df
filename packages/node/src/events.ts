/** Builds the two kinds of event Lookout takes (its schemas/event.json), with nothing a password could ride in. */
import crypto from 'node:crypto';

export type SignInKind = 'login_failed' | 'login_succeeded' | 'login_blocked' | 'password_reset_requested' | 'privilege_granted';

export interface SignInAttempt {
  kind: SignInKind;
  /** the login name or email tried */
  actor?: string;
  actorId?: string;
  ip?: string;
  userAgent?: string;
  outcome?: string;
}

export interface EventBase {
  sdk: { name: string; version: string };
  release?: string;
  environment?: string;
}

/** Keys that look like a secret: a caller who passes one by mistake never sends it. */
const SECRET_LIKE = /pass(word)?|passwd|pwd|secret|token|credential/i;

export const newEventId = (): string => crypto.randomBytes(16).toString('hex');

let lastMs = 0;
/**
 * Event times never repeat within a process: Lookout orders a group's sign-in
 * attempts by time, then by event id, so two attempts made in the same
 * millisecond would otherwise be ordered at random, and a burst's identity
 * (its earliest attempt) could change as they arrive.
 */
function eventTime(): string {
  lastMs = Math.max(Date.now(), lastMs + 1);
  return new Date(lastMs).toISOString();
}

function base(b: EventBase) {
  return {
    event_id: newEventId(),
    timestamp: eventTime(),
    platform: 'node',
    sdk: b.sdk,
    ...(b.release ? { release: b.release } : {}),
    ...(b.environment ? { environment: b.environment } : {}),
  };
}

/** Only the fields of a sign-in attempt are read; anything else the caller passed (a password) is left behind. */
export function signInEvent(attempt: SignInAttempt & Record<string, unknown>, b: EventBase) {
  const security: Record<string, string> = { kind: attempt.kind };
  const fields: [keyof SignInAttempt, string][] = [['actor', 'actor'], ['actorId', 'actor_id'], ['ip', 'ip'], ['userAgent', 'user_agent'], ['outcome', 'outcome']];
  for (const [from, to] of fields) {
    const value = attempt[from];
    if (typeof value === 'string' && value !== '') security[to] = value.slice(0, to === 'user_agent' ? 1024 : 256);
  }
  return { ...base(b), security };
}

/** Drops secret-looking keys from caller-supplied tags. */
export function safeTags(tags: Record<string, string | number | boolean> = {}): Record<string, string> {
  return Object.fromEntries(
    Object.entries(tags)
      .filter(([key]) => !SECRET_LIKE.test(key))
      .slice(0, 64)
      .map(([key, value]) => [key.slice(0, 64), String(value).slice(0, 256)]),
  );
}

interface Frame {
  function?: string;
  filename: string;
  lineno: number;
  colno: number;
  in_app: boolean;
}

/** V8's `err.stack` → Sentry-style frames, oldest call first. */
export function parseStack(stack: string | undefined): Frame[] {
  const frames: Frame[] = [];
  for (const line of (stack ?? '').split('\n')) {
    const m = /^\s*at (?:(.+?) \()?(.+?):(\d+):(\d+)\)?$/.exec(line);
    if (!m) continue;
    const filename = m[2]!.replace(/^file:\/\//, '');
    frames.push({
      ...(m[1] ? { function: m[1].slice(0, 512) } : {}),
      filename: filename.slice(0, 1024),
      lineno: Number(m[3]),
      colno: Number(m[4]),
      in_app: !filename.includes('node_modules') && !filename.startsWith('node:'),
    });
  }
  return frames.slice(0, 100).reverse();
}

export type Level = 'fatal' | 'error' | 'warning' | 'info' | 'debug';

export function errorEvent(err: unknown, opts: { tags?: Record<string, string | number | boolean>; level?: Level }, b: EventBase) {
  const error = err instanceof Error ? err : new Error(typeof err === 'string' ? err : JSON.stringify(err));
  const tags = safeTags(opts.tags);
  return {
    ...base(b),
    level: opts.level ?? 'error',
    exception: {
      values: [
        {
          type: (error.name || 'Error').slice(0, 256),
          value: String(error.message).slice(0, 8192),
          stacktrace: { frames: parseStack(error.stack) },
        },
      ],
    },
    ...(Object.keys(tags).length ? { tags } : {}),
  };
}
