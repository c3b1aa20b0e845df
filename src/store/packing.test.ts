import zlib from 'node:zlib';
import { Binary } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { packJson, packText, unpackJson, unpackText, type Packing } from './packing.ts';

const VALUES: [string, unknown][] = [
  ['an error event', { event_id: 'a'.repeat(32), exception: { values: [{ type: 'KeyError', value: 'order 17 — “ß” 😀' }] }, tags: { company: 'acme' } }],
  ['a batch of sessions', Array.from({ length: 100 }, (_, i) => ({ sid: `s-${i}`, status: i % 10 ? 'ok' : 'crashed', errors: i % 3 }))],
  ['an empty list', []],
  ['a string', 'plain text'],
];

describe('packing', () => {
  for (const packing of ['fast', 'small'] as Packing[]) {
    it.each(VALUES)(`keeps %s whole when packed ${packing}`, (_name, value) => {
      expect(unpackJson(packJson(value, packing))).toEqual(value);
      expect(unpackText(packText(JSON.stringify(value), packing))).toBe(JSON.stringify(value));
    });
  }

  it('packs small at least as small as fast', () => {
    const text = JSON.stringify(VALUES[1]![1]);
    expect(packText(text, 'small').length()).toBeLessThanOrEqual(packText(text, 'fast').length());
  });

  it('reads what was packed before the levels were chosen (zlib default, raw deflate)', () => {
    const old = new Binary(zlib.deflateRawSync(JSON.stringify(VALUES[0]![1])));
    expect(unpackJson(old)).toEqual(VALUES[0]![1]);
  });
});
