import { describe, expect, it } from 'vitest';
import { eventImpact } from './event-impact.ts';

const CHROME_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1';

describe('eventImpact', () => {
  it.each([
    ['no user, no tags', {}, { user: '', tags: [] }],
    ['a user by id, with email', { user: { id: 42, email: 'Ana@Acme.example' } }, { user: 'k:id:42\ni:42\nm:ana@acme.example', tags: [] }],
    ['a user by email', { user: { email: 'bo@acme.example' } }, { user: 'k:email:bo@acme.example\nm:bo@acme.example', tags: [] }],
    ['a user by username', { user: { username: 'cy' } }, { user: 'k:username:cy', tags: [] }],
    // the address only as a hash of it
    ['a user by address', { user: { ip_address: '203.0.113.9' } }, { user: 'k:ip:2GG36RAz68HB6Oev', tags: [] }],
    [
      "the event's tags, but not those with a dimension of their own, nor keys the search cannot name",
      { tags: { company: 'acme', environment: 'x', 'page.kind': 'cart', 'bad key': 'v', url: 'https://shop.example/cart' } },
      { user: '', tags: ['page.kind=cart', 'url=https://shop.example/cart'] },
    ],
    [
      'browser and os from the User-Agent (Python and Node SDKs send the request)',
      { request: { headers: { 'User-Agent': CHROME_WINDOWS } } },
      { user: '', tags: ['browser=Chrome 120', 'browser.name=Chrome', 'os=Windows 10', 'os.name=Windows'] },
    ],
    [
      'a phone: device and its type',
      { request: { headers: { 'user-agent': SAFARI_IPHONE } } },
      { user: '', tags: ['browser=Mobile Safari 17', 'browser.name=Mobile Safari', 'os=iOS 17.1', 'os.name=iOS', 'device=Apple iPhone', 'device.type=mobile'] },
    ],
    [
      "the SDK's contexts before the User-Agent, the runtime and server",
      {
        contexts: { browser: { name: 'Firefox', version: '121.0' }, os: { name: 'Linux' }, runtime: { name: 'node', version: 'v20.11.0' } },
        server_name: 'web-1',
        request: { headers: { 'User-Agent': CHROME_WINDOWS } },
      },
      { user: '', tags: ['browser=Firefox 121.0', 'browser.name=Firefox', 'os=Linux', 'os.name=Linux', 'runtime=node v20.11.0', 'server_name=web-1'] },
    ],
    ["a tag the event sets wins over a derived one", { tags: { browser: 'Custom' }, contexts: { browser: { name: 'Chrome' } } }, { user: '', tags: ['browser=Custom', 'browser.name=Chrome'] }],
  ])('%s', (_, event, expected) => {
    expect(eventImpact(event)).toEqual(expected);
  });
});
