/** Signing in (a password and, when on, a second factor; or single sign-on), and setting a password with a one-time link. */
import { useState } from 'preact/hooks';
import { api, ApiError, rememberSession, type Session } from '../api.ts';
import { navigate } from '../router.ts';
import { Failure, Title, useAction } from '../ui.tsx';

/** Only a path of this site is followed after signing in. */
function nextPath(): string {
  const next = new URLSearchParams(location.search).get('next') ?? '';
  return next.startsWith('/') && !next.startsWith('//') ? next : '/projects';
}

/** Why a single sign-on came back refused (the server's reason and message), to say so above the forms. */
function ssoRefusal(): string | null {
  const q = new URLSearchParams(location.search);
  return q.get('sso_error') ? `Single sign-on refused (${q.get('sso_error')}): ${q.get('message') ?? ''}` : null;
}

export function SignInPage({ onSignedIn }: { onSignedIn(session: Session): void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [otp, setOtp] = useState('');
  const [needsCode, setNeedsCode] = useState(false);
  const [act, error, busy] = useAction();
  const refused = ssoRefusal();
  const submit = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      try {
        const session = await api<Session>('POST', '/session', { email, password, ...(needsCode ? { otp } : {}) });
        rememberSession(session);
        onSignedIn(session);
        navigate(session.setup_2fa ? '/account' : nextPath(), { replace: true });
      } catch (err) {
        // the password was right: ask for the second factor, keeping what was typed
        if (err instanceof ApiError && err.reason === 'otp_required') setNeedsCode(true);
        else throw err;
      }
    });
  };
  const sso = (event: Event) => {
    event.preventDefault();
    location.assign(`/api/dashboard/sso/start?${new URLSearchParams({ email })}`);
  };
  return (
    <section class="narrow">
      <Title>Sign in</Title>
      {refused && (
        <p class="failure" role="alert">
          {refused}
        </p>
      )}
      <form onSubmit={submit}>
        <label>
          Email
          <input type="email" name="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input type="password" name="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        {needsCode && (
          <label>
            Code from your authenticator app, or a recovery code
            <input name="otp" autocomplete="one-time-code" inputMode="numeric" required autoFocus value={otp} onInput={(e) => setOtp(e.currentTarget.value)} />
          </label>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && <Failure error={error} />}
      </form>
      <form onSubmit={sso} aria-labelledby="sso-heading">
        <h2 id="sso-heading">Single sign-on</h2>
        <p class="muted">If your organisation signs in through its identity provider, enter your work email above and continue there.</p>
        <button type="submit" disabled={!email}>
          Continue with single sign-on
        </button>
      </form>
      <p class="muted">No account yet? An owner adds you from the Organisation page (an invite link) or with <code>npx lookout admin user add</code>.</p>
    </section>
  );
}

export function SetPasswordPage() {
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const [act, error, busy] = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      if (password !== repeat) throw new Error('the two passwords differ');
      const { email } = await api<{ email: string }>('POST', '/password', { token: location.hash.slice(1), password });
      setDone(email);
    });
  };
  if (done) {
    return (
      <section class="narrow">
        <Title>Password set</Title>
        <p>
          The password of {done} is set. <a href="/sign-in">Sign in</a>.
        </p>
      </section>
    );
  }
  return (
    <section class="narrow">
      <Title>Set your password</Title>
      <form onSubmit={submit}>
        <label>
          New password (at least 12 characters)
          <input type="password" autocomplete="new-password" required minLength={12} value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        <label>
          The same password again
          <input type="password" autocomplete="new-password" required value={repeat} onInput={(e) => setRepeat(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy}>
          Set password
        </button>
        {error && <Failure error={error} />}
      </form>
    </section>
  );
}
