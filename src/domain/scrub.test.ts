import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FILTERED, isSecretKey, scrubCards, scrubEvent } from './scrub.ts';

const python = JSON.parse(fs.readFileSync(new URL('../../test/fixtures/python-event.json', import.meta.url), 'utf8'));

describe('isSecretKey', () => {
  it.each([
    'password', 'Passwd', 'db_password', 'pwd', 'client_secret', 'token', 'csrftoken', 'api_key', 'X-Api-Key', 'apikey',
    'Authorization', 'auth', 'Cookie', 'Set-Cookie', 'cookies', 'sessionid', 'session_token', 'session', 'credentials',
    'private_key', 'privatekey', 'xsrf', 'signature',
  ])('%s is secret', (key) => expect(isSecretKey(key)).toBe(true));
  it.each(['user', 'username', 'email', 'sessions', 'kind', 'actor', 'actor_id', 'outcome', 'user_agent', 'url', 'status_code', 'trace_id'])('%s is not', (key) =>
    expect(isSecretKey(key)).toBe(false),
  );
});

describe('scrubCards', () => {
  it.each([
    ['pay with 4111 1111 1111 1111 now', `pay with ${FILTERED} now`],
    ['5500-0000-0000-0004', FILTERED],
    ['378282246310005', FILTERED],
    ['4111 1111 1111 1112', '4111 1111 1111 1112'], // fails the Luhn check
    ['order 123456789012', 'order 123456789012'], // too short
    ['trace 4c79f60c11214eb38604f4ae0781bfb2', 'trace 4c79f60c11214eb38604f4ae0781bfb2'],
  ])('%s', (text, want) => expect(scrubCards(text)).toBe(want));
});

describe('scrubEvent', () => {
  it('filters every secret of the Python fixture and nothing else', () => {
    const { value, filtered } = scrubEvent(structuredClone(python));
    const v = value as typeof python;
    const inApp = v.exception.values[1].stacktrace.frames[1].vars;
    expect(inApp).toMatchObject({ card_number: FILTERED, password: FILTERED, api_key: FILTERED, session_token: FILTERED, cart: { id: 7, lines: 3, currency: 'EUR' } });
    expect(v.request.headers).toEqual({ Host: 'shop.example.com', 'User-Agent': 'Mozilla/5.0', Cookie: FILTERED, Authorization: FILTERED, 'X-Api-Key': FILTERED });
    expect(v.request.cookies).toBe(FILTERED);
    expect(v.request.query_string).toBe(`step=2&token=${FILTERED}`);
    expect(v.request.data).toEqual({ card: FILTERED, remember: 'on', passwd: FILTERED });
    expect(v.breadcrumbs.values[2].data).toMatchObject({ authorization: FILTERED, url: 'https://pay.example/api' });
    expect(v.contexts.payment).toEqual({ provider: 'pay.example', client_secret: FILTERED });
    expect(v.contexts.trace).toEqual(python.contexts.trace);
    expect(v.extra).toEqual({ 'sys.argv': ['manage.py', 'runserver'], db_password: FILTERED });
    expect(v.user).toEqual(python.user);
    expect(filtered).toContain('/request/headers/Authorization');
    for (const secret of ['hunter2-in-vars', 'ak_live_vars', 'st-vars-123', 'cookie-secret', 'aGVhZGVyLXNlY3JldA', 'header-api-key', 'csrf-secret', 'form-secret', 'crumb-secret', 'ctx-secret', 'extra-secret', 'qs-secret', '4111 1111', '5500-0000']) {
      expect(JSON.stringify(value)).not.toContain(secret);
    }
  });

  it('reads [key, value] pairs as headers and query strings come', () => {
    const { value } = scrubEvent({ request: { headers: [['Authorization', 'x'], ['Accept', 'y']], query_string: [['token', 't'], ['q', 'z']] } });
    expect(value).toEqual({ request: { headers: [['Authorization', FILTERED], ['Accept', 'y']], query_string: [['token', FILTERED], ['q', 'z']] } });
  });

  it("leaves the SDK's list of packages alone, and still filters the same words as keys elsewhere", () => {
    const event = { modules: { oauthlib: '3.2.2', 'django-auth-ldap': '4.6.0', 'python-jose': '3.3.0' }, extra: { oauth_token: 'tok-1', auth: 'basic' } };
    const { value, filtered } = scrubEvent(structuredClone(event));
    expect(value).toEqual({ ...event, extra: { oauth_token: FILTERED, auth: FILTERED } });
    expect(filtered).toEqual(['/extra/oauth_token', '/extra/auth']);
  });

  it.each([
    ['/usr/lib/python3/dist-packages/oauthlib/oauth2/rfc6749/tokens.py', false],
    ['app/auth/views.py', false],
    ['C:\\app\\auth\\session.js', false],
    ['auth_middleware.ts', false],
    ['oauth_token', true],
    ['X-Auth-Token', true],
    ['session_id', true],
  ])('reads the key %j as a secret: %s (a path names code)', (key, secret) => {
    expect(isSecretKey(key)).toBe(secret);
  });

  it('keeps a sign-in attempt whole, but never its password', () => {
    const attempt = { event_id: '4'.repeat(32), security: { kind: 'login_failed', actor_id: '4111111111111111', ip: '192.0.2.1', password: 'p' } };
    expect(scrubEvent(attempt).value).toEqual({ ...attempt, security: { ...attempt.security, password: FILTERED } });
  });
});
