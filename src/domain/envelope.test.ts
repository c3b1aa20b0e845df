import { describe, expect, it } from 'vitest';
import { keyFromSentryAuth, parseDsn, parseEnvelope } from './envelope.ts';

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
