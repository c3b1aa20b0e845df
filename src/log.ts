import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON lines on stdout. Nothing that could hold a key is ever passed in. */
export function makeLogger(level: string, name: string): Logger {
  return pino({
    name,
    level,
    redact: { paths: ['*.headers["x-service-key"]', '*.headers["x-sentry-auth"]', '*.key', '*.secret_key'], censor: '[redacted]' },
  });
}
