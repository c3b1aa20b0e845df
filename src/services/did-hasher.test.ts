/** The `did` hasher keeps recent hashes: a kept one equals a fresh HMAC, and the oldest go first. */
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { makeDidHasher } from './sessions.service.ts';

const hmac = (key: string, project: number, did: string) => crypto.createHmac('sha256', key).update(`${project}:${did}`).digest('hex').slice(0, 16);

describe('makeDidHasher', () => {
  it.each([
    ['a user id', 7, 'user-1'],
    ['the same id in another project', 8, 'user-1'],
    ['an id with a colon', 7, '1:user'],
    ['a non-ASCII id', 7, 'usér-ø'],
  ])('%s: the first and the kept hash both equal the HMAC', (_, project, did) => {
    const hash = makeDidHasher('secret-key');
    expect(hash(project)(did)).toBe(hmac('secret-key', project, did));
    expect(hash(project)(did)).toBe(hmac('secret-key', project, did));
  });

  it('past 50,000 ids, hashes stay right as the oldest are dropped', () => {
    const hash = makeDidHasher('k')(1);
    for (let i = 0; i < 60_000; i++) hash(`u${i}`);
    for (const i of [0, 9_999, 10_000, 59_999]) expect(hash(`u${i}`)).toBe(hmac('k', 1, `u${i}`));
  });
});
