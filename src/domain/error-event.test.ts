import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { anonymizeIp, LIMITS, normalizeEvent, normalizeIp } from './error-event.ts';
import type { Obj } from './obj.ts';
import { formatLogMessage } from './event-repairs.ts';

const now = new Date('2026-11-23T12:00:00Z');
const python = JSON.parse(fs.readFileSync(new URL('../../test/fixtures/python-event.json', import.meta.url), 'utf8')) as Obj;
const frame = (i: number) => ({ filename: `f${i}.py`, function: `fn${i}`, lineno: i, in_app: i % 2 === 0 });

describe('normalizeEvent', () => {
  it('keeps every field of a Python SDK event as sent, unknown ones included (the user address made anonymous)', () => {
    const out = normalizeEvent(python, { now });
    expect(out).toEqual({ ...python, user: { ...(python.user as Obj), ip_address: '203.0.113.0' } });
  });

  it.each([
    ['203.0.113.9', '203.0.113.0'],
    ['2001:db8:85a3:8d3:1319:8a2e:370:7348', '2001:db8:85a3::'],
    ['2001:db8::1', '2001:db8:0::'],
    ['::1', '0:0:0::'],
    ['300.1.1.1', null],
    ['not an address', null],
  ])('user address %s is kept as %s', (ip, want) => {
    expect(anonymizeIp(ip)).toBe(want);
  });

  it('does not change its input', () => {
    const input = { event_id: 'a'.repeat(32), tags: [['k', 'v']], message: 'x'.repeat(LIMITS.string + 5) };
    const copy = structuredClone(input);
    normalizeEvent(input, { now });
    expect(input).toEqual(copy);
  });

  it.each([
    ['tags as pairs become an object; other values as JSON', { tags: [['company', 'acme'], ['n', 5]] }, { tags: { company: 'acme', n: '5' } }],
    ['breadcrumbs as a plain array', { breadcrumbs: [{ message: 'a' }] }, { breadcrumbs: { values: [{ message: 'a' }] } }],
    ['exception as a plain array', { exception: [{ type: 'E' }] }, { exception: { values: [{ type: 'E' }] } }],
    ['one exception as the object itself (old raven clients)', { exception: { type: 'E', value: 'v' } }, { exception: { values: [{ type: 'E', value: 'v' }] } }],
    [
      'the legacy interface holding one exception object',
      { 'sentry.interfaces.Exception': { type: 'KeyError', value: "'x'", stacktrace: { frames: [{ function: 'f' }] } } },
      { exception: { values: [{ type: 'KeyError', value: "'x'", stacktrace: { frames: [{ function: 'f' }] } }] } },
    ],
    ['a message object: its text, the object kept as logentry', { message: { formatted: 'hi 1', message: 'hi %s', params: [1] } }, { message: 'hi 1', logentry: { formatted: 'hi 1', message: 'hi %s', params: [1] } }],
    ['logentry alone gives the message, its params applied', { logentry: { message: 'disk %s', params: ['full'] } }, { message: 'disk full', logentry: { formatted: 'disk full', message: 'disk %s', params: ['full'] } }],
    ['epoch seconds become ISO', { timestamp: 1795000000.5 }, { timestamp: new Date(1795000000500).toISOString() }],
    ['a fingerprint part that is not a string, as JSON', { fingerprint: ['a', 7] }, { fingerprint: ['a', '7'] }],
    ['{{auto}} ip is the client address, made anonymous', { user: { ip_address: '{{auto}}' } }, { user: { ip_address: '198.51.100.0' } }],
    [
      'the legacy interface names, read under the modern ones (noted)',
      { 'sentry.interfaces.Exception': { values: [{ type: 'E' }] }, 'sentry.interfaces.Http': { url: 'https://x.example/' }, 'sentry.interfaces.User': { id: '1' }, 'sentry.interfaces.Message': { message: 'm %s', params: ['1'] } },
      { exception: { values: [{ type: 'E' }] }, request: { url: 'https://x.example/' }, user: { id: '1' }, logentry: { formatted: 'm 1' }, message: 'm 1', _meta: { '/sentry.interfaces.Http': { rem: 'renamed', value: 'request' } } },
    ],
    ['a time without a zone is UTC', { timestamp: '2026-11-26T11:05:00' }, { timestamp: '2026-11-26T11:05:00.000Z' }],
    ['a time with a space and microseconds', { timestamp: '2026-11-26 11:05:00.123456' }, { timestamp: '2026-11-26T11:05:00.123Z' }],
    ['epoch seconds as text', { timestamp: '1795000000' }, { timestamp: new Date(1795000000000).toISOString() }],
    ['{{default}} however spaced', { fingerprint: ['{{default}}', 'x'] }, { fingerprint: ['{{ default }}', 'x'] }],
  ])('%s', (_name, patch, want) => {
    const out = normalizeEvent({ event_id: 'a'.repeat(32), timestamp: now.toISOString(), ...patch }, { now, clientIp: '198.51.100.4' });
    expect(out).toMatchObject(want);
  });

  it.each([
    ['critical', 'fatal'],
    ['WARN', 'warning'],
    ['Error', 'error'],
    ['loud', 'error'],
  ])('level %s is read as %s, and the value sent is noted', (level, want) => {
    const out = normalizeEvent({ event_id: 'a'.repeat(32), level }, { now });
    expect(out.level).toBe(want);
    expect(out._meta).toMatchObject({ '/level': { rem: 'level', value: level } });
  });

  it('fills a missing timestamp with the time received, and notes it', () => {
    const out = normalizeEvent({ event_id: 'a'.repeat(32), message: 'm' }, { now });
    expect(out.timestamp).toBe(now.toISOString());
    expect(out._meta).toEqual({ '/timestamp': { rem: 'timestamp' } });
  });

  it('cuts long strings anywhere and notes each with its length', () => {
    const long = 'x'.repeat(LIMITS.string + 100);
    const out = normalizeEvent({ event_id: 'a'.repeat(32), timestamp: now.toISOString(), message: long, extra: { deep: [long] }, release: 'r'.repeat(300) }, { now });
    expect((out.message as string).length).toBe(LIMITS.string);
    expect(out._meta).toMatchObject({
      '/message': { rem: 'trimmed', len: LIMITS.string + 100 },
      '/extra/deep/0': { rem: 'trimmed', len: LIMITS.string + 100 },
      '/release': { rem: 'trimmed', len: 300 },
    });
    expect((out.release as string).length).toBe(LIMITS.release);
  });

  it('keeps the 50 oldest and the 200 newest frames of a longer stack', () => {
    const frames = Array.from({ length: 400 }, (_, i) => frame(i));
    const out = normalizeEvent({ event_id: 'a'.repeat(32), timestamp: now.toISOString(), exception: { values: [{ type: 'E', stacktrace: { frames } }] } }, { now });
    const kept = ((out.exception as Obj).values as Obj[])[0]!.stacktrace as { frames: { lineno: number }[] };
    expect(kept.frames).toHaveLength(250);
    expect(kept.frames[49]!.lineno).toBe(49);
    expect(kept.frames[50]!.lineno).toBe(200);
    expect(kept.frames[249]!.lineno).toBe(399);
    expect(out._meta).toEqual({ '/exception/values/0/stacktrace/frames': { rem: 'frames', len: 400 } });
  });

  it('keeps the newest 100 breadcrumbs', () => {
    const values = Array.from({ length: 130 }, (_, i) => ({ message: `b${i}` }));
    const out = normalizeEvent({ event_id: 'a'.repeat(32), timestamp: now.toISOString(), breadcrumbs: { values } }, { now });
    const kept = (out.breadcrumbs as { values: { message: string }[] }).values;
    expect(kept).toHaveLength(100);
    expect(kept[0]!.message).toBe('b30');
    expect(out._meta).toEqual({ '/breadcrumbs/values': { rem: 'breadcrumbs', len: 130 } });
  });

  it('cuts nesting deeper than the limit', () => {
    let deep: Obj = { leaf: 1 };
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const out = normalizeEvent({ event_id: 'a'.repeat(32), timestamp: now.toISOString(), extra: deep }, { now });
    expect(JSON.stringify(out)).toContain('"[…]"');
    expect(Object.values(out._meta as Obj)).toContainEqual({ rem: 'depth' });
  });

  it('brings an event over the size cap under it, dropping the least useful parts first', () => {
    const big = 'v'.repeat(8000);
    const frames = Array.from({ length: 60 }, (_, i) => ({ ...frame(i), vars: { a: big, b: big } }));
    const out = normalizeEvent(
      { event_id: 'a'.repeat(32), timestamp: now.toISOString(), modules: { m: '1' }, exception: { values: [{ type: 'E', stacktrace: { frames } }] } },
      { now },
    );
    expect(Buffer.byteLength(JSON.stringify(out))).toBeLessThanOrEqual(LIMITS.eventBytes);
    expect(out.modules).toBeUndefined();
    const kept = ((out.exception as Obj).values as Obj[])[0]!.stacktrace as { frames: Obj[] };
    expect(kept.frames).toHaveLength(60); // frames stay, their variables go
    expect(out._meta).toMatchObject({ '/modules': { rem: 'size' }, '/exception/frames/vars': { rem: 'size' } });
  });

  it('keeps a __proto__ key as data, never as a prototype', () => {
    const input = JSON.parse('{"event_id": "' + 'a'.repeat(32) + '", "message": "m", "extra": {"__proto__": {"polluted": true}}}') as Obj;
    const out = normalizeEvent(input, { now });
    expect(JSON.stringify(out.extra)).toBe('{"__proto__":{"polluted":true}}');
    expect((out.extra as Obj).polluted).toBeUndefined();
    expect(({} as Obj).polluted).toBeUndefined();
  });

  it('keeps the trims an SDK already noted in _meta', () => {
    const out = normalizeEvent({ event_id: 'a'.repeat(32), timestamp: now.toISOString(), _meta: { '/extra/x': { rem: 'trimmed', len: 9 } }, message: 'm' }, { now });
    expect(out._meta).toEqual({ '/extra/x': { rem: 'trimmed', len: 9 } });
  });
});

it('fingerprint [] (sentry-ruby sends it always) and null are the default grouping', () => {
  for (const fingerprint of [[], null]) expect(normalizeEvent({ event_id: 'a'.repeat(32), fingerprint }, { now: new Date(0) })).not.toHaveProperty('fingerprint');
});

describe('formatLogMessage', () => {
  it.each([
    ['py log error %s for order %d', ['x', 1042], 'py log error x for order 1042'],
    ['%r and %%', ['a'], 'a and %'],
    ['%(user)s paid %(amount).2f', { user: 'ann', amount: 3 }, 'ann paid 3'],
    ['{} then {}', [1, 2], '1 then 2'],
    ['{1} before {0}', ['a', 'b'], 'b before a'],
    ['{name} {{literal}}', { name: 'n' }, 'n {literal}'],
    ['more %s than %s', ['one'], 'more one than %s'],
  ])('%j with %j', (message, params, out) => {
    expect(formatLogMessage(message, params)).toBe(out);
  });
  it('nothing to apply: null', () => {
    expect(formatLogMessage('plain %s', [])).toBeNull();
    expect(formatLogMessage('plain', ['x'])).toBeNull();
  });
});

describe("a sign-in attempt's address (normalizeIp)", () => {
  it.each([
    ['198.51.100.7', '198.51.100.7'],
    ['::ffff:198.51.100.7', '198.51.100.7'],
    ['::FFFF:c633:6407', '198.51.100.7'],
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['::127.0.0.1', '::7f00:1'],
    ['::', '::'],
    ['fe80::1%eth0', null],
    ['010.1.1.1', null],
    ['198.51.100.7|203.0.113.99', null],
    ['not-an-ip', null],
    ['', null],
  ])('%j → %j', (input, output) => {
    expect(normalizeIp(input)).toBe(output);
  });

  it('normalizeEvent writes the address one way, and cuts a long actor (noted) without splitting a pair', () => {
    const event = normalizeEvent({ event_id: 'e', security: { kind: 'login_failed', actor: `${'x'.repeat(255)}😀`, ip: '::ffff:192.0.2.1' } }, { now: new Date(0) });
    expect(event.security).toEqual({ kind: 'login_failed', actor: 'x'.repeat(255), ip: '192.0.2.1' });
    expect(event._meta).toMatchObject({ '/security/actor': { rem: 'trimmed', len: 257 } });
  });
});

describe('limits declared once', () => {
  it("an event's release and environment are cut where a session's and a query's are refused (schemas/session.json)", () => {
    const session = JSON.parse(fs.readFileSync(new URL('../../schemas/session.json', import.meta.url), 'utf8')) as { $defs: Record<string, { maxLength: number }> };
    expect([LIMITS.release, LIMITS.environment]).toEqual([session.$defs.release!.maxLength, session.$defs.environment!.maxLength]);
  });
});
