import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { prng } from '../../test/helpers/prng.ts';
import {
  attemptGroupKey,
  attemptMember,
  bucketKey,
  cutText,
  filterSetOfSpread,
  readAttemptMember,
  readBucketKey,
  readRollupKey,
  readSpreadField,
  releaseSubject,
  rollupKey,
  spreadField,
  wellFormed,
} from './client-keys.ts';

/** The separators keys were ever joined with, and other text that trips parsers: a line separator, an emoji, quotes. */
const TRICKY = ['|', ':', '{', '}', '\n', '\0', '\r', '\u2028', '\u2029', '"', '\\', '😀', '[', ']', ',', '%', '*', ' ', 'a', 'Z', '0'];

/** Random strings, mostly of the tricky characters, some empty; replayable from the seed. */
function strings(seed: number, n: number): string[] {
  const rnd = prng(seed);
  return Array.from({ length: n }, () => {
    const length = Math.floor(rnd() * 12);
    let s = '';
    for (let i = 0; i < length; i++) s += rnd() < 0.8 ? TRICKY[Math.floor(rnd() * TRICKY.length)] : String.fromCharCode(32 + Math.floor(rnd() * 90));
    return s;
  });
}

/** Whether distinct inputs (compared as JSON) made distinct keys. */
function injective<T>(inputs: T[], key: (input: T) => string): boolean {
  const seen = new Map<string, string>();
  for (const input of inputs) {
    const k = key(input);
    const was = seen.get(k);
    if (was !== undefined && was !== JSON.stringify(input)) return false;
    seen.set(k, JSON.stringify(input));
  }
  return true;
}

const pairs = (seed: number, n: number) => {
  const [a, b] = [strings(seed, n), strings(seed + 1, n)];
  // each pair beside the pair that moves a separator from one part to the other: joined, both read the same
  const out: [string, string][] = [];
  for (let i = 0; i < n; i++) out.push([a[i]!, b[i]!], [`${a[i]}|${b[i]}`.slice(0, -1), `${b[i]}`.slice(-1)], [`${a[i]}|`, b[i]!], [a[i]!, `|${b[i]}`]);
  return out;
};

describe('encode and decode pairs round-trip any text', () => {
  const ids = Array.from({ length: 500 }, (_, i) => crypto.createHash('md5').update(String(i)).digest('hex'));

  it('attempt members: id, kind and actor come back as put in', () => {
    const actors = strings(1, 500);
    for (const [i, actor] of actors.entries()) {
      for (const kind of ['f', 's', 'login_blocked']) {
        expect(readAttemptMember(attemptMember({ id: ids[i]!, kind, actor }))).toEqual({ id: ids[i], kind, actor });
        expect(readAttemptMember(attemptMember({ id: ids[i]!, kind }))).toEqual({ id: ids[i], kind });
      }
    }
    expect(injective(actors.map((actor, i) => [ids[i % 7], actor]), ([id, actor]) => attemptMember({ id: id!, kind: 'f', actor }))).toBe(true);
  });

  it("attempt members refuse an id or kind holding '|' (they are Lookout's)", () => {
    expect(() => attemptMember({ id: 'a|b', kind: 'f' })).toThrow();
    expect(() => attemptMember({ id: ids[0]!, kind: 'f|x', actor: 'a' })).toThrow();
  });

  it('spread fields and their filter sets', () => {
    for (const value of strings(2, 1000)) {
      for (const dim of ['r', 'e', 'c'] as const) {
        const field = spreadField(dim, value);
        expect(readSpreadField(field)).toEqual({ dim, value });
        expect(filterSetOfSpread(field)).toBe(`f${dim}:${value}`);
      }
    }
    expect(readSpreadField('x:1')).toBeNull();
  });

  it('buckets and rollup keys', () => {
    for (const [environment, release] of pairs(3, 500)) {
      const bucket = bucketKey(environment, release);
      expect(readBucketKey(bucket)).toEqual({ environment, release });
      expect(readRollupKey(rollupKey(bucket, null))).toEqual({ hour: null, environment, release });
      expect(readRollupKey(rollupKey(bucket, 1_795_694_400_000))).toEqual({ hour: 1_795_694_400_000, environment, release });
    }
    expect(injective(pairs(4, 500), ([e, r]) => rollupKey(bucketKey(e, r), 0))).toBe(true);
  });

  it('hashed keys: distinct parts never share a key, whatever separators they hold', () => {
    const cases = pairs(5, 2000);
    expect(injective(cases, ([actor, ip]) => attemptGroupKey(actor, ip))).toBe(true);
    expect(injective(cases, ([release, environment]) => releaseSubject(release, environment))).toBe(true);
    expect(attemptGroupKey('victim|203.0.113.99', '198.51.100.7')).not.toBe(attemptGroupKey('victim', '203.0.113.99|198.51.100.7'));
    expect(attemptGroupKey('a', null)).not.toBe(attemptGroupKey('a', 'null'));
    expect(releaseSubject('1.0\nprod', 'x')).not.toBe(releaseSubject('1.0', 'prod\nx'));
    expect(attemptGroupKey('a', '192.0.2.1')).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});

describe('client text made safe to keep', () => {
  it.each([
    ['a\ud800b', 'a\ufffdb'],
    ['\udc00', '\ufffd'],
    ['😀', '😀'],
    ['x\ud83d', 'x\ufffd'],
    ['plain', 'plain'],
  ])('wellFormed(%j) = %j', (input, output) => {
    expect(wellFormed(input)).toBe(output);
  });

  it.each([
    ['abcdef', 3, 'abc'],
    ['ab😀', 3, 'ab'],
    ['ab😀', 4, 'ab😀'],
    ['abc', 5, 'abc'],
  ])('cutText(%j, %i) = %j, never half a pair', (input, max, output) => {
    expect(cutText(input, max)).toBe(output);
  });
});
