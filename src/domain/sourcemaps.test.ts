/**
 * Source maps applied to frames, against fixtures from real clients (test/fixtures/sourcemaps/): a bundle esbuild
 * built minified with its map, given a debug ID by `sentry-cli sourcemaps inject` (3.8), and the event
 * @sentry/browser 10 captured in Chromium when it threw (the page's inline script, then the bundle's two frames).
 */
import fs from 'node:fs';
import path from 'node:path';
import { TraceMap } from '@jridgewell/trace-mapping';
import { describe, expect, it } from 'vitest';
import { fingerprintOf } from './fingerprint.ts';
import type { Obj } from './obj.ts';
import { mapRequests, reasonWords, resolveUrl, scopesOf, symbolicate, urlCandidates, type MapSource, type UnmappedReason } from './sourcemaps.ts';

const FIXTURES = path.join(import.meta.dirname, '..', '..', 'test', 'fixtures', 'sourcemaps');
const read = (name: string) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');
const EVENT = JSON.parse(read('browser-event.json')) as Obj;
const MINIFIED = read('app.min.js');
const MAP = new TraceMap(read('app.min.js.map'));
const PAGE = 'http://127.0.0.1:5173/';
const BUNDLE = 'http://127.0.0.1:5173/app.min.js';
const DEBUG_ID = '016c3d50-7c1f-55fe-9f88-849ef2aa561a';

const source = (over: Partial<MapSource> = {}): MapSource => ({ map: MAP, url: '~/app.min.js.map', resolvedWith: 'debug-id', scopes: scopesOf(MINIFIED), ...over });
const framesOf = (event: Obj) => ((event.exception as Obj).values as Obj[])[0]!.stacktrace as { frames: Obj[] };
const rawOf = (event: Obj) => ((event.exception as Obj).values as Obj[])[0]!.raw_stacktrace as { frames: Obj[] };
const noPage: UnmappedReason = { reason: 'url_not_found', url: PAGE, release: 'shop@3.1.0', dist: null };

describe('mapRequests', () => {
  it.each([
    ['the browser event: the page (no debug ID) and the bundle (its debug ID from debug_meta)', EVENT, [{ url: PAGE, debugId: null }, { url: BUNDLE, debugId: DEBUG_ID }]],
    ['a Python event: no JavaScript frame', { platform: 'python', exception: { values: [{ stacktrace: { frames: [{ filename: 'app.py', lineno: 3 }] } }] } }, []],
    ['a frame without a column is left alone', { platform: 'javascript', exception: { values: [{ stacktrace: { frames: [{ abs_path: BUNDLE, lineno: 3 }] } }] } }, []],
    ['a frame mapped before is left alone', { exception: { values: [{ stacktrace: { frames: [{ abs_path: BUNDLE, lineno: 3, colno: 9, data: { symbolicated: true } }] } }] } }, []],
    ['a thread\'s stack and a message\'s stack count too', { stacktrace: { frames: [{ abs_path: 'app:///main.js', lineno: 1, colno: 2 }] } }, [{ url: 'app:///main.js', debugId: null }]],
    ['a <anonymous> frame of a JavaScript event is not a file', { platform: 'javascript', exception: { values: [{ stacktrace: { frames: [{ filename: '<anonymous>', lineno: 1, colno: 2 }] } }] } }, []],
  ])('%s', (_, event, expected) => {
    expect(mapRequests(event as Obj)).toEqual(expected);
  });
});

describe('urlCandidates and resolveUrl', () => {
  it.each([
    ['https://shop.example/static/app.min.js?v=3#x', ['https://shop.example/static/app.min.js', '~/static/app.min.js']],
    ['~/app.min.js', ['~/app.min.js']],
    ['app:///main.js', ['app:///main.js', '~/main.js']],
  ])('urlCandidates(%s)', (url, expected) => {
    expect(urlCandidates(url)).toEqual(expected);
  });
  it.each([
    ['app.min.js.map', '~/static/app.min.js', '~/static/app.min.js.map'],
    ['../cart.js', '~/static/app.min.js.map', '~/cart.js'],
    ['../../../cart.js', '~/app.min.js.map', '~/cart.js'],
    ['maps/app.js.map', 'https://shop.example/static/app.min.js', 'https://shop.example/static/maps/app.js.map'],
    ['webpack://shop/./src/cart.js', '~/app.min.js.map', 'webpack://shop/./src/cart.js'],
  ])('resolveUrl(%s, %s)', (ref, base, expected) => {
    expect(resolveUrl(ref, base)).toBe(expected);
  });
});

describe('symbolicate', () => {
  const sources = new Map<string, MapSource | UnmappedReason>([
    [PAGE, noPage],
    [BUNDLE, source()],
  ]);

  it('maps each bundle frame to its original file, line, column, enclosing function and source lines; keeps the minified stack', () => {
    const { event, mapped, unmapped } = symbolicate(EVENT, sources);
    expect([mapped, unmapped]).toEqual([2, 1]);
    const [page, outer, crash] = framesOf(event).frames;
    expect(crash).toMatchObject({
      abs_path: '~/cart.js',
      filename: '/cart.js',
      function: 'addToCart',
      lineno: 4,
      colno: 11,
      context_line: '    throw new Error(`cannot add ${item.name} without a sku`);',
      pre_context: expect.arrayContaining(['  if (!item.sku) {']),
      post_context: ['  }', '  cart.items.push(item);', '  return cart;', '}', ''],
      in_app: true,
      data: { symbolicated: true, sourcemap: '~/app.min.js.map', resolved_with: 'debug-id' },
    });
    // the position is in onClickAddToCart's body (the map's name there is the callee's, addToCart)
    expect(outer).toMatchObject({ filename: '/fixture-main.js', function: 'onClickAddToCart', lineno: 4 });
    expect(page).toMatchObject({ filename: PAGE, data: { sourcemap_error: { ...noPage, message: `no uploaded file has the URL ${PAGE} in release shop@3.1.0` } } });
    expect(rawOf(event)).toEqual(framesOf(EVENT));
    expect(EVENT).toEqual(JSON.parse(read('browser-event.json'))); // the input is not changed
  });

  it('groups by the mapped frames: the fingerprint no longer holds minified names', () => {
    const { event } = symbolicate(EVENT, sources);
    const renamed = structuredClone(EVENT);
    for (const f of framesOf(renamed).frames.slice(1)) f.function = `x${String(f.function)}`; // the bundle's, as another build names them
    expect(fingerprintOf(symbolicate(renamed, sources).event)).toBe(fingerprintOf(event));
    expect(fingerprintOf(renamed)).not.toBe(fingerprintOf(EVENT));
  });

  it('mapping again changes nothing, and a frame whose map arrived later is mapped with the first minified stack kept', () => {
    const missing: UnmappedReason = { reason: 'debug_id_not_found', debug_id: DEBUG_ID };
    const once = symbolicate(EVENT, new Map<string, UnmappedReason>([[PAGE, noPage], [BUNDLE, missing]]));
    expect(once).toMatchObject({ mapped: 0, unmapped: 3 });
    const later = symbolicate(once.event, sources);
    expect(later.mapped).toBe(2);
    expect(framesOf(later.event).frames[2]!.data).toEqual({ symbolicated: true, sourcemap: '~/app.min.js.map', resolved_with: 'debug-id' });
    expect(rawOf(later.event)).toEqual(framesOf(EVENT));
    const again = symbolicate(later.event, sources);
    expect(framesOf(again.event)).toEqual(framesOf(later.event));
    expect(again.mapped).toBe(0);
  });

  it('without the minified file the function is the name the map gives at the position', () => {
    const { event } = symbolicate(EVENT, new Map([[BUNDLE, source({ scopes: null })]]));
    expect(framesOf(event).frames[2]).toMatchObject({ function: 't', lineno: 4 });
  });

  it('a position the map does not cover says so', () => {
    const far = structuredClone(EVENT);
    framesOf(far).frames[2]!.lineno = 90;
    const { event } = symbolicate(far, sources);
    expect(framesOf(event).frames[2]!.data).toEqual({ sourcemap_error: { reason: 'not_covered', map: '~/app.min.js.map', line: 90, column: 39, message: 'the source map ~/app.min.js.map has no mapping for line 90, column 39' } });
  });
});

describe('scopesOf', () => {
  it.each([
    ['function declarations', 'function alpha(){return 1}', ['alpha']],
    ['a variable, a property and a method', 'const a=()=>1;const o={b:function(){},c(){}};class K{d(){}}', ['a', 'b', 'c', 'd']],
    ['an assignment to a member', 'window.onClick=function(){}', ['onClick']],
    ['an anonymous callback', '[1].map(function(){})', [null]],
  ])('%s', (_, code, names) => {
    expect(scopesOf(code)!.map((s) => s.name?.text ?? null)).toEqual(names);
  });
  it('a file that does not parse has no scopes', () => {
    expect(scopesOf('function (')).toBeNull();
  });
});

describe('reasonWords', () => {
  it.each<[UnmappedReason, string]>([
    [{ reason: 'debug_id_not_found', debug_id: DEBUG_ID }, `no uploaded source map has debug ID ${DEBUG_ID}`],
    [{ reason: 'url_not_found', url: BUNDLE, release: 'shop@3.1.0', dist: 'web' }, `no uploaded file has the URL ${BUNDLE} in release shop@3.1.0 (dist web)`],
    [{ reason: 'no_release', url: BUNDLE }, `the event has no debug ID for ${BUNDLE} and no release to find its URL in`],
    [{ reason: 'no_sourcemap_reference', url: '~/app.min.js' }, 'the uploaded file ~/app.min.js names no source map (no sourceMappingURL and no Sourcemap header)'],
    [{ reason: 'map_not_found', url: '~/app.min.js', map: '~/app.min.js.map' }, '~/app.min.js names the source map ~/app.min.js.map, which was not uploaded'],
    [{ reason: 'map_unreadable', map: '~/a.map', error: 'Unexpected token' }, 'the source map ~/a.map could not be read: Unexpected token'],
  ])('%j', (reason, words) => {
    expect(reasonWords(reason)).toBe(words);
  });
});
