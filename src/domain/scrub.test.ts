import { describe, expect, it } from 'vitest';
import { scrubPasswords } from './scrub.ts';

describe('scrubPasswords', () => {
  it('removes password-like keys at any depth and reports their paths', () => {
    const { value, removed } = scrubPasswords({
      security: { actor: 'a', password: 'hunter2' },
      extra: { form: { Passwd: 'x', user: 'u', nested: [{ pwd: 'y', api_key: 'k', token: 't' }] }, client_secret: 's' },
      message: 'password reset',
    });
    expect(value).toEqual({ security: { actor: 'a' }, extra: { form: { user: 'u', nested: [{}] } }, message: 'password reset' });
    expect(removed.sort()).toEqual(['/extra/client_secret', '/extra/form/Passwd', '/extra/form/nested/0/api_key', '/extra/form/nested/0/pwd', '/extra/form/nested/0/token', '/security/password']);
  });
  it('keeps ordinary keys', () => {
    const input = { user_agent: 'x', outcome: 'bad', kind: 'login_failed', actor_id: '1' };
    expect(scrubPasswords(input).value).toEqual(input);
  });
});
