import { describe, expect, it } from 'vitest';
import { UAParser } from 'ua-parser-js';
import { parseUserAgent } from './user-agent.ts';

const HEADERS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1',
  'Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0)',
  'sentry.python/1.9.0',
  '',
];

describe('parseUserAgent', () => {
  it.each(HEADERS)('reads %j as ua-parser-js does, the first time and from memory', (ua) => {
    const fresh = new UAParser(ua).getResult();
    expect(parseUserAgent(ua)).toEqual(fresh);
    expect(parseUserAgent(ua)).toEqual(fresh);
  });
});
