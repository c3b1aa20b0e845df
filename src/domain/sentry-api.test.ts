import { describe, expect, it } from 'vitest';
import { prng } from '../../test/helpers/prng.ts';
import { issueOrderOf, linkHeader, readCursor, readIssueRef, readStatsPeriod, shortIdOf, statusChangeOf } from './sentry-api.ts';

describe('short ids', () => {
  it.each([
    ['shop', 1, 'SHOP-1'],
    ['shop', 35, 'SHOP-Z'],
    ['erp-prod', 36, 'ERP-PROD-10'],
    ['a1', 1_000_000, 'A1-LFLS'],
  ])('%s #%i is %s', (slug, id, short) => expect(shortIdOf(slug, id)).toBe(short));

  it('every short id reads back to its project and id', () => {
    const random = prng(7);
    for (let i = 0; i < 2000; i++) {
      const slug = ['shop', 'erp-prod', 'x', 'a-b-c9'][Math.floor(random() * 4)]!;
      const id = 1 + Math.floor(random() * Number.MAX_SAFE_INTEGER);
      expect(readIssueRef(shortIdOf(slug, id))).toEqual({ id, projectSlug: slug });
    }
  });

  it.each([
    ['42', { id: 42, projectSlug: null }],
    ['shop-1f', { id: 51, projectSlug: 'shop' }],
    ['SHOP-0', null],
    ['SHOP', null],
    ['-1', null],
    ['shop_1', null],
    ['99999999999999999999', null],
  ])('%s names %j', (segment, ref) => expect(readIssueRef(segment)).toEqual(ref));
});

describe('cursors and Link', () => {
  it.each([
    [undefined, 0],
    ['0:100:0', 100],
    ['1700000000:25:1', 25],
    ['nonsense', 0],
    ['0:-5:0', 0],
  ])('cursor %s starts at %i', (cursor, offset) => expect(readCursor(cursor)).toBe(offset));

  it('names the previous and next pages, each saying whether it has rows', () => {
    const link = linkHeader(new URL('http://lookout.test/api/0/projects/acme/shop/issues/?query=is%3Aunresolved&cursor=0:0:0'), 100, 100, false);
    expect(link).toBe(
      '<http://lookout.test/api/0/projects/acme/shop/issues/?query=is%3Aunresolved&cursor=0%3A0%3A1>; rel="previous"; results="true"; cursor="0:0:1", ' +
        '<http://lookout.test/api/0/projects/acme/shop/issues/?query=is%3Aunresolved&cursor=0%3A200%3A0>; rel="next"; results="false"; cursor="0:200:0"',
    );
  });
});

describe("Sentry's words", () => {
  const now = new Date('2026-11-29T12:00:00Z');
  it.each([
    [{ status: 'resolved' }, { status: 'resolved' }],
    [{ status: 'resolvedInNextRelease' }, { status: 'resolved', in_next_release: true }],
    [{ status: 'unresolved' }, { status: 'unresolved' }],
    [{ status: 'muted' }, { status: 'ignored' }],
    [{ status: 'ignored', ignoreCount: 10 }, { status: 'ignored', until_count: 10 }],
    [{ status: 'ignored', ignoreDuration: 30 }, { status: 'ignored', until: '2026-11-29T12:30:00.000Z' }],
    [{ status: 'reprocessing' }, null],
  ])('%j is %j', (body, change) => expect(statusChangeOf(body, now)).toEqual(change));

  it.each([
    ['24h', 86_400_000],
    ['14d', 14 * 86_400_000],
    ['90m', 90 * 60_000],
    ['2w', 14 * 86_400_000],
    ['1y', null],
    ['', null],
  ])('statsPeriod %s is %s ms', (period, ms) => expect(readStatsPeriod(period)).toBe(ms));

  it.each([
    ['date', 'last_seen'],
    ['new', 'first_seen'],
    ['freq', 'event_count'],
    ['user', 'event_count'],
    [undefined, 'last_seen'],
  ])('sort %s lists by %s', (sort, order) => expect(issueOrderOf(sort)).toBe(order));
});
