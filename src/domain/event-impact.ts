/**
 * Who an error event touched and how it is tagged, as its issue counts them (issue 50): its user, under the keys the
 * search finds it by, and its tag values, the event's own beside the ones Sentry derives (browser, operating system
 * and device from the SDK's contexts, or from the User-Agent header read with ua-parser-js, the runtime and server).
 */
import crypto from 'node:crypto';
import { isObj, type Obj } from './obj.ts';
import { parseUserAgent } from './user-agent.ts';

/** A tag key the search can name (src/domain/search.ts reads `key:value` with such a key); others are not counted. */
const TAG_KEY = /^[\w.:-]{1,32}$/;
/** Longest tag value counted: Sentry's limit. */
const TAG_VALUE_MAX = 200;
/** Tags with a dimension of their own in an issue's spread, not counted twice. */
const OWN_DIMENSIONS = new Set(['release', 'environment', 'company', 'level']);

export interface EventImpact {
  /** '' for no user; else its keys joined by '\n': `k:<key>` the one it is counted by, `i:<id>`, `m:<email>` */
  user: string;
  /** `<key>=<value>`, each key once */
  tags: string[];
}

const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);

/**
 * The user an event names, by the first of id, email, username and address it has (the address only as a hash of
 * it), with the id and email the search finds it by.
 */
function userKeys(user: unknown): string {
  if (!isObj(user)) return '';
  const id = text(user.id);
  const email = text(user.email)?.toLowerCase() ?? null;
  const username = text(user.username);
  const ip = text(user.ip_address);
  const key = id !== null ? `id:${id}` : email !== null ? `email:${email}` : username !== null ? `username:${username}` : ip !== null ? `ip:${hashed(ip)}` : null;
  if (key === null) return '';
  return [`k:${key}`, ...(id !== null ? [`i:${id}`] : []), ...(email !== null ? [`m:${email}`] : [])].join('\n');
}

const hashed = (ip: string) => crypto.hash('sha256', ip, 'base64url').slice(0, 16);

/** `name version`, or the name alone. */
const named = (name: string | null, version: string | null) => (name === null ? null : version === null ? name : `${name} ${version}`);

/** The User-Agent header of the event's request, if it sent one. */
export function userAgent(event: Obj): string | null {
  const request = event.request;
  if (!isObj(request) || !isObj(request.headers)) return null;
  const found = Object.entries(request.headers).find(([k]) => k.toLowerCase() === 'user-agent');
  return found ? text(found[1]) : null;
}

/** The tags Sentry derives: browser, os, device, runtime (from contexts, else the User-Agent) and server_name. */
function derivedTags(event: Obj): [string, string | null][] {
  const contexts = isObj(event.contexts) ? event.contexts : {};
  const ctx = (name: string): Obj => (isObj(contexts[name]) ? contexts[name] : {});
  const browser = ctx('browser');
  const os = ctx('os');
  const device = ctx('device');
  const runtime = ctx('runtime');
  const ua = userAgent(event);
  const parsed = ua !== null && (text(browser.name) === null || text(os.name) === null) ? parseUserAgent(ua) : null;
  const browserName = text(browser.name) ?? parsed?.browser.name ?? null;
  const browserVersion = text(browser.version) ?? parsed?.browser.major ?? null;
  const osName = text(os.name) ?? parsed?.os.name ?? null;
  const osVersion = text(os.version) ?? parsed?.os.version ?? null;
  const deviceName = text(device.model) ?? text(device.family) ?? named(parsed?.device.vendor ?? null, parsed?.device.model ?? null);
  return [
    ['browser', named(browserName, browserVersion)],
    ['browser.name', browserName],
    ['os', named(osName, osVersion)],
    ['os.name', osName],
    ['device', deviceName],
    ['device.type', parsed?.device.type ?? null],
    ['runtime', named(text(runtime.name), text(runtime.version))],
    ['server_name', text(event.server_name)],
  ];
}

/** The event's user and tags, as its issue counts them (apply-events-4.lua). */
export function eventImpact(event: Obj): EventImpact {
  const tags = new Map<string, string>();
  const own = isObj(event.tags) ? Object.entries(event.tags) : [];
  for (const [key, value] of [...own, ...derivedTags(event)]) {
    const v = text(value);
    if (v === null || tags.has(key) || OWN_DIMENSIONS.has(key) || !TAG_KEY.test(key)) continue;
    tags.set(key, v.slice(0, TAG_VALUE_MAX));
  }
  return { user: userKeys(event.user), tags: [...tags].map(([k, v]) => `${k}=${v}`) };
}
