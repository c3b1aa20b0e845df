/**
 * One error class per outcome a client can see. Services throw them; the
 * error middleware is the only place that turns them into HTTP bodies
 * `{reason, message, ...details}`.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    // An answer, not a fault: made without a stack trace, which cost 12 µs of each of the 96,000 refusals of a storm
    // (bench:storm, --cpu-prof), an eighth of a refusal's time in the API.
    const depth = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = depth;
    this.name = new.target.name;
  }
}

export class BadRequestError extends AppError {
  constructor(reason: string, message: string, details?: Record<string, unknown>) {
    super(400, reason, message, details);
  }
}
export class UnauthorizedError extends AppError {
  constructor(reason: string, message: string) {
    super(401, reason, message);
  }
}
export class ForbiddenError extends AppError {
  constructor(reason: string, message: string) {
    super(403, reason, message);
  }
}
export class NotFoundError extends AppError {
  constructor(reason: string, message: string) {
    super(404, reason, message);
  }
}
export class ConflictError extends AppError {
  constructor(reason: string, message: string, details?: Record<string, unknown>) {
    super(409, reason, message, details);
  }
}
export class PayloadTooLargeError extends AppError {
  constructor(limit: number) {
    super(413, 'payload_too_large', `the body is larger than the limit of ${limit} bytes`, { limit });
  }
}
export class UnsupportedMediaTypeError extends AppError {
  constructor(expected: string[]) {
    super(415, 'unsupported_media_type', `Content-Type must be ${expected.join(' or ')}`, { expected });
  }
}
export class RateLimitedError extends AppError {
  constructor(retryAfterSeconds: number, headers: Record<string, string>) {
    super(429, 'rate_limited', `too many requests; retry in ${retryAfterSeconds} s`, { retry_after: retryAfterSeconds }, {
      'Retry-After': String(retryAfterSeconds),
      ...headers,
    });
  }
}
/**
 * Refused for now, before anything was written (admission, a project's quota, spike protection): 429, or 503 when a
 * store cannot take more; Retry-After says when to try again. `categories` are what a Sentry SDK should hold back
 * (none: everything) and `scope` whose limit it is, for X-Sentry-Rate-Limits on the Sentry routes.
 */
export class RefusedError extends AppError {
  constructor(
    status: 429 | 503,
    reason: string,
    message: string,
    readonly retryAfter: number,
    readonly categories: readonly string[] = [],
    readonly scope: 'organization' | 'project' = 'organization',
  ) {
    super(status, reason, message, { retry_after: retryAfter }, { 'Retry-After': String(retryAfter) });
  }
}
/** What a Sentry SDK should hold back when a project's quota of a category refuses. */
const SENTRY_CATEGORIES = { error: ['error', 'default', 'security'], session: ['session'], transaction: ['transaction'], span: ['span'], log_item: ['log_item'] } as const;
const CATEGORY_WORDS = { error: 'error events', session: 'sessions', transaction: 'transactions', span: 'spans', log_item: 'log lines' } as const;

/** A project's quota, or spike protection, refusing its error events or its sessions for now. */
export class QuotaRefusedError extends RefusedError {
  constructor(reason: string, retryAfter: number, category: keyof typeof SENTRY_CATEGORIES) {
    const what = CATEGORY_WORDS[category];
    super(
      429,
      reason,
      reason === 'spike'
        ? `this project is sending ${what} far above its usual rate and is held to a ceiling until it calms; retry in ${retryAfter} s`
        : `this project's quota of ${what} per ${reason.replace('quota_', '')} is used up; retry in ${retryAfter} s`,
      retryAfter,
      SENTRY_CATEGORIES[category],
      'project',
    );
  }
}
export class UnavailableError extends AppError {
  constructor(reason: string, message: string) {
    super(503, reason, message);
  }
}
