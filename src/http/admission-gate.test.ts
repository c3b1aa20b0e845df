import { describe, expect, it } from 'vitest';
import { ingestRoute, pathOf } from './admission-gate.ts';

describe('admission gate', () => {
  // which requests admission reads before Koa, from the request line alone
  it.each([
    ['POST', '/api/v1/events', 'events'],
    ['POST', '/api/v1/sessions?key=abc', 'sessions'],
    ['POST', '/api/42/envelope/', 'envelope'],
    ['POST', '/api/42/envelope/?sentry_key=abc&sentry_version=7', 'envelope'],
    ['POST', '/api/42/store/', 'store'],
    ['POST', '/api/store/', 'store'],
    ['POST', '/api/42/security/?sentry_key=abc', 'security'],
    ['POST', 'http://lookout.example/api/42/envelope/', 'envelope'],
    ['GET', '/api/v1/events', null],
    ['OPTIONS', '/api/42/envelope/', null],
    ['POST', '/api/v1/issues', null],
    ['POST', '/api/42/envelope/extra', null],
    ['POST', 'not a url', null],
  ] as const)('%s %s: %s', (method, url, name) => {
    expect(ingestRoute(method, pathOf(url))?.name ?? null).toBe(name);
  });
});
