import { describe, expect, it } from 'vitest';
import { DEFAULT_FILTERS, filteredBy, type InboundFilters } from './inbound-filters.ts';

const ALL: InboundFilters = { browser_extensions: true, localhost: true, legacy_browsers: true, releases: ['*-dev', 'erp@16.*'], error_messages: ['*ResizeObserver loop*', 'ChunkLoadError*'] };
const thrown = (type: string, value: string, absPath = 'https://shop.example/app.js') => ({
  exception: { values: [{ type, value, stacktrace: { frames: [{ abs_path: 'https://shop.example/vendor.js' }, { abs_path: absPath }] } }] },
});
const withAgent = (ua: string) => ({ ...thrown('TypeError', 'x is undefined'), request: { url: 'https://shop.example/cart', headers: { 'User-Agent': ua } } });

describe('filteredBy', () => {
  it.each([
    ['an ordinary error', thrown('TypeError', "Cannot read properties of undefined (reading 'id')"), null],
    ['thrown in an extension file', thrown('Error', 'boom', 'chrome-extension://abcdef/content.js'), 'browser_extensions'],
    ['a Firefox extension', thrown('Error', 'boom', 'moz-extension://1234/inject.js'), 'browser_extensions'],
    ['a message extensions throw', thrown('TypeError', 'Extension context invalidated.'), 'browser_extensions'],
    ['an extension frame that is not the last is not where it was thrown', { exception: { values: [{ type: 'E', value: 'v', stacktrace: { frames: [{ abs_path: 'chrome-extension://x/a.js' }, { abs_path: 'https://shop.example/app.js' }] } }] } }, null],
    ['a loopback user address', { ...thrown('E', 'v'), user: { ip_address: '127.0.0.1' } }, 'localhost'],
    ['IPv6 loopback', { ...thrown('E', 'v'), user: { ip_address: '::1' } }, 'localhost'],
    ['a request to localhost', { ...thrown('E', 'v'), request: { url: 'http://localhost:8069/web' } }, 'localhost'],
    ['a request to a .localhost name', { ...thrown('E', 'v'), request: { url: 'http://shop.localhost/' } }, 'localhost'],
    ['a private but not loopback address is kept', { ...thrown('E', 'v'), user: { ip_address: '10.0.0.4' }, request: { url: 'http://10.0.0.4/' } }, null],
    ['Internet Explorer 11', withAgent('Mozilla/5.0 (Windows NT 10.0; Trident/7.0; rv:11.0) like Gecko'), 'legacy_browsers'],
    ['EdgeHTML 18', withAgent('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/70.0.3538.102 Safari/537.36 Edge/18.19582'), 'legacy_browsers'],
    ['Safari 11', withAgent('Mozilla/5.0 (Macintosh; Intel Mac OS X 10_13_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/11.1.2 Safari/605.1.15'), 'legacy_browsers'],
    ['Chrome 120', withAgent('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36'), null],
    ['a browser context says Firefox 60', { ...thrown('E', 'v'), contexts: { browser: { name: 'Firefox', version: '60.0' } } }, 'legacy_browsers'],
    ['a release glob', { ...thrown('E', 'v'), release: 'erp@17.0.4-dev' }, 'release'],
    ['a release glob with a dot and a slash', { ...thrown('E', 'v'), release: 'erp@16.2/beta' }, 'release'],
    ['a release that matches none', { ...thrown('E', 'v'), release: 'erp@17.0.4' }, null],
    ['a message glob over the value, any case', thrown('Error', 'resizeobserver loop limit exceeded'), 'error_message'],
    ['a message glob over the type', thrown('ChunkLoadError', 'Loading chunk 7 failed.'), 'error_message'],
    ['a plain message', { message: 'ResizeObserver loop completed with undelivered notifications.' }, 'error_message'],
  ] as const)('%s', (_, event, reason) => {
    expect(filteredBy(event as Record<string, unknown>, ALL)).toBe(reason);
  });

  it('keeps everything while every filter is off (the default)', () => {
    expect(filteredBy({ ...withAgent('Mozilla/5.0 (compatible; MSIE 9.0; Windows NT 6.1; Trident/5.0)'), user: { ip_address: '127.0.0.1' }, release: 'a-dev' }, DEFAULT_FILTERS)).toBeNull();
  });
});
