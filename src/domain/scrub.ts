/**
 * The scrubber: runs on every event before anything is stored, with Sentry's
 * default data scrubber as the anchor (docs/decisions.md).
 * - A value under a key that looks like it holds a secret (passwords,
 *   secrets, tokens, API keys, authorization, cookies, session ids, CSRF
 *   tokens, credentials, private keys) is replaced whole by `[Filtered]`, at
 *   any depth: frame `vars`, `extra`, `request` (data, headers, cookies,
 *   query), breadcrumb data, contexts, and the event itself. Pairs
 *   (`[[key, value], ...]`, as headers, query strings and tags may come) are
 *   read the same way, and so is a query string `a=1&token=x`.
 * - A card number (13 to 19 digits, spaces or dashes between, passing the
 *   Luhn check) inside any string is replaced by `[Filtered]`.
 * Sign-in passwords are therefore never stored, wherever they are sent.
 */
import { setOwn } from './error-event.ts';

export const FILTERED = '[Filtered]';

const SECRET_KEY = /pass(word|wd|phrase)?|pwd|secret|token|api[-_]?key|auth|credential|cookie|session[-_]?(id|key|token)|^session$|csrf|xsrf|private[-_]?key|signature/i;

/**
 * Top-level keys never scrubbed: Lookout's own bookkeeping and grouping, and `modules`, the SDK's list of packages
 * and their versions, whose names are never secrets (`oauthlib`, `django-auth-ldap` would read as `auth` keys).
 */
const OWN_KEYS = new Set(['event_id', '_meta', 'fingerprint', 'modules']);
/**
 * Identifiers that may be long digit strings (snowflake ids, numeric user ids): no card number is looked
 * for in `security` or in these values, so a sign-in actor or a user keeps its identity (keys are still checked).
 */
const IDENTIFIERS: Record<string, ReadonlySet<string>> = { '': new Set(['release', 'dist']), '/user': new Set(['id']) };

/** A file or module path used as a key (`/srv/app/auth/views.py`, `app\\auth.js`): it names code, not a secret. */
const PATH_KEY = /^[/\\~.]|[/\\]|\.(py|pyc|js|mjs|cjs|ts|tsx|jsx|rb|go|java|kt|php|cs|rs|swift)$/i;

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key) && !PATH_KEY.test(key);
}

const CARD = /(?<![\d])(?:\d[ -]?){12,18}\d(?![\d])/g;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** The string with every card number in it replaced. */
export function scrubCards(text: string): string {
  if (text.length < 13) return text;
  return text.replace(CARD, (match) => {
    const digits = match.replace(/[ -]/g, '');
    return digits.length >= 13 && digits.length <= 19 && luhn(digits) ? FILTERED : match;
  });
}

function scrubQueryString(text: string): string {
  if (!text.includes('=')) return scrubCards(text);
  return text
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      if (eq < 0) return scrubCards(part);
      let key = part.slice(0, eq);
      try {
        key = decodeURIComponent(key.replace(/\+/g, ' '));
      } catch {
        // an undecodable key is matched as sent
      }
      return isSecretKey(key) ? `${part.slice(0, eq)}=${FILTERED}` : scrubCards(part);
    })
    .join('&');
}

/**
 * Scrubs `value` in place (the normaliser's fresh copy: nothing is copied
 * twice) and answers the JSON pointers of what was filtered (keys whose
 * values were replaced; strings that held a card number).
 */
export function scrubEvent(value: unknown): { value: unknown; filtered: string[] } {
  const filtered: string[] = [];
  const pointer = (at: string, key: string) => `${at}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
  const text = (input: string, at: string, key: string | number): string => {
    const out = key === 'query_string' ? scrubQueryString(input) : scrubCards(input);
    if (out !== input) filtered.push(typeof key === 'number' ? `${at}/${key}` : pointer(at, key));
    return out;
  };
  // Walks containers in place; a path is built only for a container entered or a value filtered.
  const walk = (input: object, at: string, cards: boolean): void => {
    if (Array.isArray(input)) {
      for (let i = 0; i < input.length; i++) {
        const item: unknown = input[i];
        // A [key, value] pair: the value goes when the key looks secret.
        if (Array.isArray(item) && item.length === 2 && typeof item[0] === 'string' && isSecretKey(item[0]) && item[1] !== null) {
          filtered.push(`${at}/${i}/1`);
          item[1] = FILTERED;
        } else if (typeof item === 'string') input[i] = cards ? text(item, at, i) : item;
        else if (item !== null && typeof item === 'object') walk(item, `${at}/${i}`, cards);
      }
      return;
    }
    const obj = input as Record<string, unknown>;
    for (const k of Object.keys(obj)) {
      if (OWN_KEYS.has(k) && at === '') continue;
      const inner = obj[k];
      if (inner === null || inner === '' || (typeof inner !== 'string' && typeof inner !== 'object' && !isSecretKey(k))) continue;
      if (isSecretKey(k)) {
        filtered.push(pointer(at, k));
        setOwn(obj, k, FILTERED);
      } else if (typeof inner === 'string') {
        if (cards && !IDENTIFIERS[at]?.has(k)) setOwn(obj, k, text(inner, at, k));
      } else walk(inner as object, pointer(at, k), cards && !(at === '' && k === 'security'));
    }
  };
  if (value !== null && typeof value === 'object') walk(value, '', true);
  return { value, filtered };
}
