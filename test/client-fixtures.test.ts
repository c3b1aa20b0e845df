/**
 * What real clients sent, captured byte for byte from each with a recording
 * server (test/fixtures/clients/: method, path, headers, body), read the way
 * the Sentry endpoints read it (and a browser's CSP report as the security
 * endpoint reads it): the body decoded (gzip, base64 of zlib),
 * parsed (an envelope's event item), normalised and described. A table of
 * the normaliser's cases from real payloads, beside test/sentry-clients.test.ts
 * which runs the clients themselves.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { cspEvent, readCspReports } from '../src/domain/csp.ts';
import { parseEnvelope } from '../src/domain/envelope.ts';
import { readFeedback } from '../src/domain/feedback.ts';
import { normalizeEvent } from '../src/domain/error-event.ts';
import type { Obj } from '../src/domain/obj.ts';
import { describeError, fingerprintOf, type ErrorEventShape } from '../src/domain/fingerprint.ts';
import { storeText } from '../src/http/body.ts';
import { parseJson } from '../src/util/json.ts';

interface Capture {
  path: string;
  headers: Record<string, string>;
  body_base64: string;
}

/** The event a capture carries, as the endpoint reads it. */
function eventOf(name: string): Obj {
  const capture = JSON.parse(fs.readFileSync(new URL(`./fixtures/clients/${name}.json`, import.meta.url), 'utf8')) as Capture;
  let body = Buffer.from(capture.body_base64, 'base64');
  if (capture.headers['content-encoding'] === 'gzip') body = zlib.gunzipSync(body);
  if (capture.path.split('?')[0]!.endsWith('/envelope/')) {
    const item = parseEnvelope(body).items.find((i) => i.type === 'event')!;
    return parseJson(item.payload.toString('utf8'), 'item', false) as Obj;
  }
  return parseJson(storeText(body, 1 << 20), 'the body', false) as Obj;
}

const now = new Date('2026-11-26T12:00:00Z');

describe('payloads captured from real clients, normalised', () => {
  it.each([
    ['python-exception', 'sentry-python 1.9, store, gzip', /^TypeError: unsupported operand/, '__main__ in checkout'],
    ['python-logging', 'sentry-python 1.9, logging.error with params', /^py log error fx for order 1042$/, ''],
    ['python-wsgi', 'sentry-python 1.9, a WSGI request', /^ValueError: wsgi failure fx$/, '__main__ in app'],
    ['raven-ruby', 'raven-ruby 3.1, base64 of zlib, no time zone', /^ZeroDivisionError: divided by 0$/, 'ruby-client.rb'],
    ['sentry-ruby', 'sentry-ruby 5.3, envelope, fingerprint []', /^ZeroDivisionError: divided by 0$/, 'ruby-client.rb'],
    ['raven-node', 'raven 2.6 (Node), base64 of zlib', /^TypeError: Cannot read properties of undefined \(reading 'code'\)$/, 'applyCoupon'],
    ['sentry-go-error', 'sentry-go 0.40, envelope', /reserve sku-1: out of stock/, 'main'],
    ['sentry-go-panic', 'sentry-go 0.40, a recovered panic', /index out of range/, 'main'],
    ['sentry-browser', '@sentry/browser 10 in Chromium, text/plain envelope', /^TypeError: Cannot read properties of null \(reading 'items'\)$/, 'app.js in addToCart'],
  ])('%s (%s)', (name, _client, title, culprit) => {
    const raw = eventOf(name);
    const event = normalizeEvent(raw, { now });
    // a time with a zone, UTC when the client sent none
    expect(event.timestamp).toMatch(/(Z|[+-]\d{2}:\d{2})$/);
    expect(Math.abs(Date.parse(event.timestamp as string) - Date.now())).toBeLessThan(400 * 86_400_000);
    expect(event.fingerprint).toBeUndefined(); // sentry-ruby's [] is the default grouping
    const described = describeError(event as ErrorEventShape);
    expect(described.title).toMatch(title);
    expect(described.culprit).toContain(culprit);
    expect(fingerprintOf(event as ErrorEventShape)).toMatch(/^[0-9a-f]{32}$/);
  });

  it("@sentry/browser's captureFeedback item reads as feedback about its event", () => {
    const capture = JSON.parse(fs.readFileSync(new URL('./fixtures/clients/sentry-browser-feedback.json', import.meta.url), 'utf8')) as Capture;
    const item = parseEnvelope(Buffer.from(capture.body_base64, 'base64')).items.find((i) => i.type === 'feedback')!;
    const read = readFeedback('feedback', parseJson(item.payload.toString('utf8'), 'item', false));
    expect(read).toMatchObject({ id: expect.stringMatching(/^[0-9a-f]{32}$/), event_id: eventOf('sentry-browser').event_id, source: 'feedback', name: 'Web User', email: 'web@example.com', comments: 'The button did nothing', url: expect.stringContaining('http://127.0.0.1') });
  });

  it("Chromium's report-uri CSP report reads as a violation, titled and grouped as Sentry does", () => {
    const capture = JSON.parse(fs.readFileSync(new URL('./fixtures/clients/chromium-csp.json', import.meta.url), 'utf8')) as Capture;
    expect(capture.headers['content-type']).toBe('application/csp-report');
    const { violations } = readCspReports(parseJson(Buffer.from(capture.body_base64, 'base64').toString('utf8')));
    expect(violations).toHaveLength(1);
    const event = normalizeEvent(cspEvent(violations[0]!, 'f'.repeat(32), now), { now });
    expect(describeError(event as ErrorEventShape)).toEqual({ title: "Blocked 'script-src-elem' from https://evil.example", culprit: expect.stringContaining('/csp'), exception_type: 'csp' });
  });

  it("raven's timestamps without a zone are read as UTC", () => {
    const raw = eventOf('raven-ruby');
    expect(raw.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/);
    expect(normalizeEvent(raw, { now }).timestamp).toBe(`${raw.timestamp as string}.000Z`);
  });

  it("sentry-python's log message is formatted with its params, and kept with them", () => {
    const event = normalizeEvent(eventOf('python-logging'), { now });
    expect(event.logentry).toEqual({ message: 'py log error %s for order %d', params: ['fx', 1042], formatted: 'py log error fx for order 1042' });
    expect(event.message).toBe('py log error fx for order 1042');
  });
});
