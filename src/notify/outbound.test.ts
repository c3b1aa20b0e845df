import { describe, expect, it } from 'vitest';
import { checkUrlForm, inwardRange } from './outbound.ts';

describe('inwardRange', () => {
  it.each([
    ['93.184.215.14', null],
    ['2606:4700:4700::1111', null],
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.0.1', 'private'],
    ['fd12::1', 'private'],
    ['100.64.0.1', 'private (carrier-grade NAT)'],
    ['169.254.169.254', 'link-local (cloud metadata included)'],
    ['fe80::1', 'link-local (cloud metadata included)'],
    ['::ffff:10.0.0.1', 'private'],
    ['0.0.0.0', 'not public (unspecified)'],
    ['224.0.0.1', 'not public (multicast)'],
    // IPv6 forms that embed an IPv4 address are judged by it
    ['::127.0.0.1', 'loopback'],
    ['::7f00:1', 'loopback'],
    ['::a9fe:a9fe', 'link-local (cloud metadata included)'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['64:ff9b::93.184.215.14', null],
    ['2002:7f00:1::1', 'loopback'],
    ['2002:5db8:d70e::1', null],
    ['::', 'not public (unspecified)'],
  ])('%s', (address, expected) => {
    expect(inwardRange(address)).toBe(expected);
  });
});

describe('checkUrlForm', () => {
  it.each([
    ['ftp://example.com/x', 'scheme'],
    ['https://u:p@example.com/x', 'credentials'],
    ['not a url', 'url'],
  ])('%s is refused (%s)', (url, rule) => {
    expect(() => checkUrlForm(url)).toThrow(expect.objectContaining({ rule }));
  });
  it('takes http and https', () => {
    expect(checkUrlForm('https://hooks.example.com/a?b=1').hostname).toBe('hooks.example.com');
  });
});
