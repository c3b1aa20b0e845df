import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

/** JSON lines on stdout (or `destination`). Nothing that could hold a key is ever passed in. */
export function makeLogger(level: string, name: string, destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    redact: { paths: ['*.headers["x-service-key"]', '*.headers["x-sentry-auth"]', '*.key', '*.secret_key'], censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
