/**
 * A User-Agent header read with ua-parser-js, remembered: reading one runs
 * some hundred regular expressions (the largest part of what the API spends
 * on an accepted browser event), and the events of one application carry few
 * distinct headers, so the last thousand read are kept.
 */
import { LRUCache } from 'lru-cache';
import { UAParser, type IResult } from 'ua-parser-js';

const read = new LRUCache<string, IResult>({ max: 1000 });

/** What the header names: browser, os, device (shared; not to be changed by callers). */
export function parseUserAgent(ua: string): Readonly<IResult> {
  let result = read.get(ua);
  if (result === undefined) {
    result = new UAParser(ua).getResult();
    read.set(ua, result);
  }
  return result;
}
