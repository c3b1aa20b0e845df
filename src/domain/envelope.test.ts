import { describe, expect, it } from 'vitest';
import { keyFromSentryAuth, parseDsn, parseEnvelope } from './envelope.ts';
import { fromSentryEvent } from './sentry-event.ts';

describe('parseEnvelope', () => {
  it('reads items by newline and by length, including payloads with newlines and multi-byte characters', () => {
    const payload = '{"a":"ü\\n"}\n{"b":1}';
    const body = Buffer.from(`{"event_id":"x"}\n{"type":"session"}\n{"sid":"s"}\n{"type":"event","length":${Buffer.byteLength(payload)}}\n${payload}\n{"type":"empty"}\n`);
    const env = parseEnvelope(body);
    expect(env.header).toEqual({ event_id: 'x' });
    expect(env.items.map((i) => [i.type, i.payload.toString()])).toEqual([['session', '{"sid":"s"}'], ['event', payload], ['empty', '']]);
  });
  it.each([
    ['', /no header/],
    ['[]\n', /JSON object/],
    ['{}\n{"length":2}\n{}', /no type/],
    ['{}\n{"type":"x","length":50}\n{}', /length/],
    ['{}\n{"type":"x","length":-1}\n{}', /length/],
  ])('refuses %j', (text, message) => expect(() => parseEnvelope(Buffer.from(text))).toThrow(message));
});

describe('keys', () => {
  it.each([
    ['Sentry sentry_version=7, sentry_client=x/1, sentry_key=abc123', 'abc123'],
    ['Sentry sentry_key=abc123,sentry_version=7', 'abc123'],
    ['Bearer xyz', undefined],
    [undefined, undefined],
  ])('X-Sentry-Auth %j → %s', (header, key) => expect(keyFromSentryAuth(header)).toBe(key));
  it.each([
    ['http://abc@127.0.0.1:3000/12', { key: 'abc', project: '12' }],
    ['https://abc@o1.example.com/sub/7', { key: 'abc', project: '7' }],
    ['http://127.0.0.1/12', undefined],
    ['not a url', undefined],
    [42, undefined],
  ])('dsn %j → %j', (dsn, out) => expect(parseDsn(dsn)).toEqual(out));
});

describe('fromSentryEvent', () => {
  const now = new Date('2026-11-21T00:00:00Z');
  it('keeps what Lookout groups and shows, and drops the rest', () => {
    const out = fromSentryEvent({
      event_id: 'ABCDEF00-0000-0000-0000-000000000000'.toLowerCase(),
      timestamp: 1795000000.5,
      level: 'fatal',
      release: 'r',
      exception: { values: [{ type: 'E', value: 'v', mechanism: { handled: false }, stacktrace: { frames: [{ filename: 'a.js', function: 'f', lineno: 1, colno: 2, in_app: true, vars: { x: 1 } }] } }] },
      breadcrumbs: [{ data: { 'http.method': 'GET' } }],
      fingerprint: ['{{ default }}'],
      tags: { 'a.b': 'dropped', company: 'acme', n: 5 },
    }, now);
    expect(out).toEqual({
      event_id: 'abcdef00000000000000000000000000',
      timestamp: new Date(1795000000500).toISOString(),
      level: 'fatal',
      release: 'r',
      exception: { values: [{ type: 'E', value: 'v', stacktrace: { frames: [{ filename: 'a.js', function: 'f', lineno: 1, in_app: true }] } }] },
      tags: { company: 'acme' },
    });
  });
  it('turns a message event into a message and defaults the level', () => {
    expect(fromSentryEvent({ event_id: 'e', message: { formatted: 'hello' }, level: 'loud' }, now)).toEqual({ event_id: 'e', timestamp: now.toISOString(), level: 'error', message: 'hello' });
  });
});
