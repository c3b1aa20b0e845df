import { describe, expect, it } from 'vitest';
import { listFilters, parseSearch, termText, tokens, type SearchTerm } from './search.ts';

describe('tokens', () => {
  it.each([
    ['is:unresolved  release:erp@17.0.5', ['is:unresolved', 'release:erp@17.0.5']],
    ['"card declined" level:error', ['"card declined"', 'level:error']],
    ['release:"erp 17.0" x', ['release:"erp 17.0"', 'x']],
    ['"unclosed phrase', ['"unclosed phrase']],
    ['', []],
  ])('%j', (search, expected) => {
    expect(tokens(search)).toEqual(expected);
  });
});

describe('parseSearch', () => {
  const H = 3_600_000;
  it.each([
    ['is:unresolved', [{ kind: 'status', status: 'unresolved', negated: false }]],
    ['is:Resolved', [{ kind: 'status', status: 'resolved', negated: false }]],
    ['!is:ignored', [{ kind: 'status', status: 'ignored', negated: true }]],
    ['is:regressed', [{ kind: 'regressed', negated: false }]],
    ['is:assigned', [{ kind: 'assigned', to: 'anyone', negated: false }]],
    ['is:unassigned', [{ kind: 'assigned', to: 'anyone', negated: true }]],
    ['assigned:me', [{ kind: 'assigned', to: 'me', negated: false }]],
    ['assigned:Ana@Acme.example', [{ kind: 'assigned', to: 'ana@acme.example', negated: false }]],
    ['level:ERROR', [{ kind: 'field', field: 'level', value: 'error', negated: false }]],
    ['release:erp@17.0.5', [{ kind: 'field', field: 'release', value: 'erp@17.0.5', negated: false }]],
    ['!release:erp@17.0.4+build.7', [{ kind: 'field', field: 'release', value: 'erp@17.0.4+build.7', negated: true }]],
    ['first-release:erp@17.0.4', [{ kind: 'field', field: 'first-release', value: 'erp@17.0.4', negated: false }]],
    ['environment:production', [{ kind: 'field', field: 'environment', value: 'production', negated: false }]],
    ['user.id:42', [{ kind: 'field', field: 'user.id', value: '42', negated: false }]],
    ['user.email:ana@acme.example', [{ kind: 'field', field: 'user.email', value: 'ana@acme.example', negated: false }]],
    ['company:"Acme Ltd"', [{ kind: 'field', field: 'company', value: 'Acme Ltd', negated: false }]],
    ['has:user', [{ kind: 'has', what: 'user', negated: false }]],
    ['!has:user', [{ kind: 'has', what: 'user', negated: true }]],
    ['browser:Chrome', [{ kind: 'tag', key: 'browser', value: 'Chrome', negated: false }]],
    ['os.name:"Mac OS X"', [{ kind: 'tag', key: 'os.name', value: 'Mac OS X', negated: false }]],
    ['age:-24h', [{ kind: 'age', newer: true, ms: 24 * H, negated: false }]],
    ['age:+7d', [{ kind: 'age', newer: false, ms: 7 * 24 * H, negated: false }]],
    ['last-seen:-1h', [{ kind: 'last-seen', newer: true, ms: H, negated: false }]],
    ['last-seen:-30m', [{ kind: 'last-seen', newer: true, ms: 30 * 60_000, negated: false }]],
    ['times-seen:>100', [{ kind: 'times-seen', op: '>', count: 100, negated: false }]],
    ['times-seen:<=5', [{ kind: 'times-seen', op: '<=', count: 5, negated: false }]],
    ['times-seen:3', [{ kind: 'times-seen', op: '=', count: 3, negated: false }]],
  ])('%s', (search, terms) => {
    expect(parseSearch(search)).toEqual({ terms, text: [], unknown: [] });
    // and written back, it reads as the same term
    expect(parseSearch(termText(terms[0] as SearchTerm)).terms).toEqual(terms);
  });

  it('reads free text, quoted phrases whole, beside the terms', () => {
    expect(parseSearch('is:unresolved "card declined" checkout KeyError: level:error')).toEqual({
      terms: [
        { kind: 'status', status: 'unresolved', negated: false },
        { kind: 'field', field: 'level', value: 'error', negated: false },
      ],
      text: ['card declined', 'checkout', 'KeyError:'],
      unknown: [],
    });
  });

  it.each([
    ['is:open', 'is: takes unresolved, resolved, ignored, regressed, assigned, unassigned'],
    ['level:critical', 'level: takes debug, info, warning, error, fatal'],
    ['has:wings', 'has: takes user, release, environment, company, assignee'],
    ['age:24h', 'age: takes a signed time such as -24h (newer than) or +7d (older than), in m, h, d or w'],
    ['times-seen:many', 'times-seen: takes a count, with >, >=, < or <= before it if need be'],
    ['release:', 'release: needs a value'],
    ['!checkout', 'free text cannot be negated'],
    ['a/b:c', 'not a field or a tag name'],
  ])('names what it cannot read: %s', (search, reason) => {
    expect(parseSearch(search)).toEqual({ terms: [], text: [], unknown: [{ term: search, reason }] });
  });
});

describe('listFilters', () => {
  it('sets the list filters it serves, and names every other term with why', () => {
    expect(listFilters(parseSearch('is:resolved level:error release:erp@17.0.5 environment:production company:acme "card declined" checkout'))).toEqual({
      filters: { status: 'resolved', level: 'error', release: 'erp@17.0.5', environment: 'production', company: 'acme', query: 'card declined checkout' },
      unknown: [],
    });
    expect(listFilters(parseSearch('!release:erp@1 release:erp@2 release:erp@3 browser:Chrome is:open'))).toEqual({
      filters: { release: 'erp@2' },
      unknown: [
        { term: 'is:open', reason: 'is: takes unresolved, resolved, ignored, regressed, assigned, unassigned' },
        { term: '!release:erp@1', reason: 'the issue list does not search by this yet' },
        { term: 'release:erp@3', reason: 'one release: term at a time' },
        { term: 'browser:Chrome', reason: 'the issue list does not search by this yet' },
      ],
    });
  });
});
