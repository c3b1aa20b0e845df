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
    super(message);
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
export class UnavailableError extends AppError {
  constructor(reason: string, message: string) {
    super(503, reason, message);
  }
}
