import { describe, expect, it } from 'vitest';
import { isId, slugAttempt, slugify, SLUG_MAX } from './slug.ts';

describe('slugify', () => {
  it.each([
    ['Acme', 'acme'],
    ['Web Shop (EU)', 'web-shop-eu'],
    ['Café Müller', 'cafe-muller'],
    ['  --shop--  ', 'shop'],
    ['2024', 'org-2024'],
    ['日本', 'org'],
    ['a'.repeat(80), 'a'.repeat(SLUG_MAX)],
    [`${'a'.repeat(49)} b`, 'a'.repeat(49)],
  ])('%j → %j', (name, slug) => {
    expect(slugify(name, 'org')).toBe(slug);
  });
});

describe('slugAttempt', () => {
  it.each([
    ['shop', 0, 'shop'],
    ['shop', 1, 'shop-2'],
    ['shop', 2, 'shop-3'],
    ['shop', 3, 'shop-k3x9q2'],
    ['shop', 40, 'shop-k3x9q2'],
    ['a'.repeat(SLUG_MAX), 1, `${'a'.repeat(SLUG_MAX - 2)}-2`],
    ['a'.repeat(SLUG_MAX), 5, `${'a'.repeat(SLUG_MAX - 7)}-k3x9q2`],
  ])('%s, attempt %i → %s', (base, n, slug) => {
    expect(slugAttempt(base, n, 'k3x9q2')).toBe(slug);
    expect(slugAttempt(base, n, 'k3x9q2').length).toBeLessThanOrEqual(SLUG_MAX);
  });
});

it('a segment of digits is an id, anything else a slug', () => {
  expect([isId('12'), isId('shop'), isId('org-2024'), isId('')]).toEqual([true, false, false, false]);
});
