import { describe, expect, it } from 'vitest';
import { contactKeys, decideSeats, emailKeys, personKey, union } from './seats.ts';

describe('personKey', () => {
  it.each([
    ['c1', { id: '1', email: 'A@B.test' }, 'email:a@b.test'],
    ['c1', { id: '1', email: '  a@b.test ' }, 'email:a@b.test'],
    ['c1', { id: '1' }, 'id:c1/1'],
    ['c1', { id: '1', email: '' }, 'id:c1/1'],
    ['c1', { id: '1', email: null }, 'id:c1/1'],
    ['c2', { id: '1' }, 'id:c2/1'],
  ])('%s %j → %s', (company, person, key) => {
    expect(personKey(company, person)).toBe(key);
  });
});

describe('seat counting', () => {
  it('counts one person once across companies, members, invites and rules', () => {
    const contacts = contactKeys([
      { id: 'a', people: [{ id: '1', email: 'x@t.test' }, { id: '2' }] },
      { id: 'b', people: [{ id: '9', email: 'X@T.TEST' }, { id: '2' }] },
    ]);
    const all = union(contacts, emailKeys(['x@t.test', 'boss@t.test']), emailKeys([]), emailKeys(['Boss@t.test']));
    expect([...all].sort()).toEqual(['email:boss@t.test', 'email:x@t.test', 'id:a/2', 'id:b/2']);
  });
});

describe('decideSeats', () => {
  const set = (...keys: string[]) => new Set(keys);
  it.each([
    { name: 'unlimited', seats: null, before: set(), after: set('a', 'b', 'c'), ok: true, used: 3 },
    { name: 'within seats', seats: 3, before: set('a'), after: set('a', 'b', 'c'), ok: true, used: 3 },
    { name: 'adds beyond seats', seats: 2, before: set('a', 'b'), after: set('a', 'b', 'c'), ok: false, used: 3 },
    { name: 'shrinks while over', seats: 1, before: set('a', 'b', 'c'), after: set('a', 'b'), ok: true, used: 2 },
    { name: 'same people while over', seats: 1, before: set('a', 'b'), after: set('a', 'b'), ok: true, used: 2 },
    { name: 'swap while over', seats: 1, before: set('a', 'b'), after: set('a', 'c'), ok: false, used: 2 },
    { name: 'zero seats, empty', seats: 0, before: set(), after: set(), ok: true, used: 0 },
    { name: 'zero seats, one', seats: 0, before: set(), after: set('a'), ok: false, used: 1 },
  ])('$name', ({ seats, before, after, ok, used }) => {
    expect(decideSeats(seats, before, after)).toEqual({ ok, used });
  });
});
