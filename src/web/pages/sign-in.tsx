/** Signing in, and setting a password with the one-time link of `lookout admin user add`. */
import { useState } from 'preact/hooks';
import { api, rememberSession, type Session } from '../api.ts';
import { navigate } from '../router.ts';
import { Failure, Title, useAction } from '../ui.tsx';

/** Only a path of this site is followed after signing in. */
function nextPath(): string {
  const next = new URLSearchParams(location.search).get('next') ?? '';
  return next.startsWith('/') && !next.startsWith('//') ? next : '/projects';
}

export function SignInPage({ onSignedIn }: { onSignedIn(session: Session): void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [act, error, busy] = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const session = await api<Session>('POST', '/session', { email, password });
      rememberSession(session);
      onSignedIn(session);
      navigate(nextPath(), { replace: true });
    });
  };
  return (
    <section class="narrow">
      <Title>Sign in</Title>
      <form onSubmit={submit}>
        <label>
          Email
          <input type="email" name="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          Password
          <input type="password" name="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && <Failure error={error} />}
      </form>
      <p class="muted">No account yet? An owner creates one with <code>npx lookout admin user add</code>.</p>
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
