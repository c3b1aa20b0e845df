import { describe, expect, it } from 'vitest';
import { blockedOrigin, cspEvent, readCspReports } from './csp.ts';
import { describeError, fingerprintOf } from './fingerprint.ts';

describe('blockedOrigin', () => {
  it.each([
    ['https://evil.example/skimmer.js?v=1', 'https://evil.example'],
    ['https://evil.example:8443/a', 'https://evil.example:8443'],
    ['inline', 'inline'],
    ['eval', 'eval'],
    ['data', 'data'],
    ['data:image/png;base64,AAAA', 'data'],
    ['blob:https://shop.example/1234', 'https://shop.example'],
    ['chrome-extension://abcdef/inject.js', 'chrome-extension'],
    ['wasm-eval', 'wasm-eval'],
  ])('%s → %s', (blocked, origin) => {
    expect(blockedOrigin(blocked)).toBe(origin);
  });
});

describe('readCspReports', () => {
  const uri = {
    'csp-report': {
      'document-uri': 'http://127.0.0.1:4000/checkout',
      referrer: '',
      'violated-directive': 'script-src-elem',
      'effective-directive': 'script-src-elem',
      'original-policy': "script-src 'self'; report-uri /r",
      disposition: 'enforce',
      'blocked-uri': 'https://evil.example/skimmer.js',
      'line-number': 1,
      'column-number': 40,
      'source-file': 'http://127.0.0.1:4000/checkout',
      'status-code': 200,
      'script-sample': '',
    },
  };

  it("reads report-uri's dashed names (as Chromium 156 sends them)", () => {
    const { violations, skipped } = readCspReports(uri);
    expect(skipped).toBe(0);
    expect(violations).toEqual([
      expect.objectContaining({ document_uri: 'http://127.0.0.1:4000/checkout', effective_directive: 'script-src-elem', blocked_uri: 'https://evil.example/skimmer.js', line_number: 1, column_number: 40, referrer: null, script_sample: null }),
    ]);
  });

  it('an old report with only violated-directive takes its first word; no directive at all is skipped', () => {
    expect(readCspReports({ 'csp-report': { 'violated-directive': "script-src 'self'", 'blocked-uri': 'eval' } }).violations[0]).toMatchObject({ effective_directive: 'script-src', blocked_uri: 'eval' });
    expect(readCspReports({ 'csp-report': { 'blocked-uri': 'eval' } })).toEqual({ violations: [], skipped: 1 });
    expect(readCspReports({ something: 'else' })).toEqual({ violations: [], skipped: 1 });
  });

  it('groups by directive and blocked origin, titled as Sentry titles them', () => {
    const [a] = readCspReports(uri).violations;
    const other = { ...a!, blocked_uri: 'https://evil.example/other.js', document_uri: 'http://127.0.0.1:4000/cart' };
    const events = [cspEvent(a!, 'a'.repeat(32), new Date(0)), cspEvent(other, 'b'.repeat(32), new Date(0))];
    expect(fingerprintOf(events[0]!)).toBe(fingerprintOf(events[1]!));
    expect(describeError(events[0]!)).toEqual({ title: "Blocked 'script-src-elem' from https://evil.example", culprit: 'http://127.0.0.1:4000/checkout', exception_type: 'csp' });
    const img = cspEvent({ ...a!, effective_directive: 'img-src' }, 'c'.repeat(32), new Date(0));
    expect(fingerprintOf(img)).not.toBe(fingerprintOf(events[0]!));
  });
});
