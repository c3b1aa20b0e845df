import { describe, expect, it } from 'vitest';
import { listPlan, parseSearch, termText, textWords, tokens, type SearchTerm } from './search.ts';

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

describe('listPlan', () => {
  const now = new Date('2026-11-27T12:00:00Z');
  const H = 3_600_000;
  const MAX = Number.MAX_SAFE_INTEGER;
  const plan = (search: string, me: string | null = 'ana@acme.example') => listPlan(parseSearch(search), { me, now });
  const set = (name: string, counted = true) => ({ set: name, counted });
  it.each([
    ['', { status: 'unresolved', sets: [], not: [], ranges: [] }],
    ['is:resolved level:error company:acme', { status: 'resolved', sets: [set('fl:error'), set('fc:acme')], not: [], ranges: [] }],
    ['release:erp@17.0.5', { status: 'unresolved', sets: [set('fr:erp@17.0.5')], not: [], ranges: [], count: 'r:erp@17.0.5' }],
    ['environment:production', { status: 'unresolved', sets: [set('fe:production')], not: [], ranges: [], count: 'e:production' }],
    // release and environment match the same events
    ['release:erp@17.0.5 environment:production', { status: 'unresolved', sets: [set('fv:erp@17.0.5\nproduction')], not: [], ranges: [], count: 'v:erp@17.0.5\nproduction' }],
    ['!release:erp@1', { status: 'unresolved', sets: [], not: [set('fr:erp@1')], ranges: [] }],
    ['first-release:erp@2 user.id:42 user.email:Ana@Acme.example', { status: 'unresolved', sets: [set('ff:erp@2', false), set('fu:i:42', false), set('fu:m:ana@acme.example', false)], not: [], ranges: [] }],
    ['is:regressed has:user', { status: 'unresolved', sets: [set('fx:regressed', false), { set: 'fx:user', counted: false, complement: 'fx:nouser' }], not: [], ranges: [] }],
    ['!has:user', { status: 'unresolved', sets: [{ set: 'fx:nouser', counted: false, complement: 'fx:user' }], not: [], ranges: [] }],
    ['!has:user', { status: 'unresolved', sets: [{ set: 'fx:nouser', counted: false, complement: 'fx:user' }], not: [], ranges: [] }],
    ['is:unassigned', { status: 'unresolved', sets: [], not: [set('fx:assigned', false)], ranges: [] }],
    ['is:assigned assigned:me assigned:bo@acme.example', { status: 'unresolved', sets: [set('fx:assigned', false), set('fa:ana@acme.example', false), set('fa:bo@acme.example', false)], not: [], ranges: [] }],
    ['browser:Chrome !os.name:Windows', { status: 'unresolved', sets: [set('ft:browser=Chrome')], not: [set('ft:os.name=Windows')], ranges: [] }],
    ['age:-24h', { status: 'unresolved', sets: [], not: [], ranges: [{ on: 'first', min: now.getTime() - 24 * H, max: MAX }] }],
    ['last-seen:+1h', { status: 'unresolved', sets: [], not: [], ranges: [{ on: 'last', min: 0, max: now.getTime() - H }] }],
    ['!age:-24h', { status: 'unresolved', sets: [], not: [], ranges: [{ on: 'first', min: 0, max: now.getTime() - 24 * H }] }],
    ['times-seen:>100', { status: 'unresolved', sets: [], not: [], ranges: [{ on: 'count', min: 101, max: MAX }] }],
    ['times-seen:<=5', { status: 'unresolved', sets: [], not: [], ranges: [{ on: 'count', min: 0, max: 5 }] }],
    ['!times-seen:>=10', { status: 'unresolved', sets: [], not: [], ranges: [{ on: 'count', min: 0, max: 9 }] }],
    ['times-seen:7', { status: 'unresolved', sets: [], not: [], ranges: [{ on: 'count', min: 7, max: 7 }] }],
    ['"card declined" CheckoutError', { status: 'unresolved', sets: [set('tx:card'), set('tx:declined'), set('tx:card declined'), set('tx:checkouterror')], not: [], ranges: [] }],
  ])('%j', (search, expected) => {
    expect(plan(search)).toEqual({ plan: expected, unknown: [] });
  });

  it('names every term it cannot serve, with why', () => {
    expect(plan('!is:resolved is:ignored is:resolved !times-seen:3 has:company assigned:me is:open', null).unknown).toEqual([
      { term: 'is:open', reason: 'is: takes unresolved, resolved, ignored, regressed, assigned, unassigned' },
      { term: '!is:resolved', reason: 'the list shows one status at a time: name it with is:' },
      { term: 'is:resolved', reason: 'one is: status at a time' },
      { term: '!times-seen:3', reason: 'times-seen cannot be negated with =: use < and >' },
      { term: 'has:company', reason: 'the issue list does not search by this yet' },
      { term: 'assigned:me', reason: 'assigned:me needs a signed-in user; name the email' },
    ]);
  });
});

describe('textWords', () => {
  it.each([
    ['BetaError', ['betaerror']],
    ['failed for journal', ['failed', 'for', 'journal', 'failed for', 'for journal']],
    ['a b', ['a b']],
    ['app.run(x)', ['app', 'run', 'app run', 'run x']],
    ['', []],
  ])('%j', (text, expected) => {
    expect(textWords(text)).toEqual(expected);
  });
});
