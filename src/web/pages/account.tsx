/** Your account: open sessions, password, two-factor sign-in and API tokens. */
import { useState } from 'preact/hooks';
import { api, type Session } from '../api.ts';
import type { Account, TokenList, WebSessions } from '../types.ts';
import { Failure, OnceSecret, Show, Time, Title, useAction, useChange, useLoad } from '../ui.tsx';


export type SessionRow = WebSessions['sessions'][number];
type Token = TokenList['tokens'][number];

const SCOPES = ['project:read', 'project:write', 'project:releases', 'org:read'] as const;

export function AccountPage({ session }: { session: Session }) {
  const me = useLoad(() => api<Account>('GET', '/me'), 'me');
  return (
    <section>
      <Title>{`Account: ${session.email}`}</Title>
      {session.setup_2fa && (
        <p class="failure" role="alert">
          Your organisation requires two-factor sign-in. Turn it on below to use the dashboard.
        </p>
      )}
      <Show loaded={me}>{(data) => <TwoFactor me={data} onChange={me.reload} held={session.setup_2fa} />}</Show>
      {!session.setup_2fa && (
        <>
          <Sessions />
          <Password />
          <Tokens />
        </>
      )}
    </section>
  );
}

/** A session list with a button to end each (the current one is marked and kept). */
export function SessionTable({ sessions, onEnd, busy }: { sessions: SessionRow[]; onEnd(id: string): void; busy: boolean }) {
  if (sessions.length === 0) return <p class="muted">No open sessions.</p>;
  return (
    <div class="scroll" tabIndex={0}>
      <table>
        <thead>
          <tr>
            <th scope="col">Opened</th>
            <th scope="col">Last used</th>
            <th scope="col">Address</th>
            <th scope="col">Browser</th>
            <th scope="col">How</th>
            <th scope="col">
              <span class="sr-only">End</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {sessions.map((s) => (
            <tr key={s.id}>
              <td><Time at={s.created_at} /></td>
              <td><Time at={s.last_seen} /></td>
              <td>{s.ip}</td>
              <td>{s.user_agent || '—'}</td>
              <td>{s.via === 'sso' ? 'single sign-on' : 'password'}</td>
              <td>
                {s.current ? (
                  'this session'
                ) : (
                  <button type="button" disabled={busy} onClick={() => onEnd(s.id)}>
                    End session
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Sessions() {
  const loaded = useLoad(() => api<{ sessions: SessionRow[] }>('GET', '/me/sessions'), 'sessions');
  const [change, error, busy] = useChange(loaded.reload);
  return (
    <section aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Sessions</h2>
      {error && <Failure error={error} />}
      <Show loaded={loaded}>
        {({ sessions }) => (
          <>
            <SessionTable sessions={sessions} busy={busy} onEnd={(id) => change(() => api('DELETE', `/me/sessions/${id}`))} />
            {sessions.length > 1 && (
              <button type="button" disabled={busy} onClick={() => change(() => api('DELETE', '/me/sessions'))}>
                End every other session
              </button>
            )}
          </>
        )}
      </Show>
    </section>
  );
}

function Password() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [done, setDone] = useState<number | null>(null);
  const [act, error, busy] = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const { ended_sessions } = await api<{ ended_sessions: number }>('POST', '/me/password', { current_password: current, new_password: next });
      setDone(ended_sessions);
      setCurrent('');
      setNext('');
    });
  };
  return (
    <section aria-labelledby="password-heading">
      <h2 id="password-heading">Password</h2>
      <form onSubmit={submit} class="inline">
        <label>
          Current password
          <input type="password" autocomplete="current-password" required value={current} onInput={(e) => setCurrent(e.currentTarget.value)} />
        </label>
        <label>
          New password (at least 12 characters)
          <input type="password" autocomplete="new-password" required minLength={12} value={next} onInput={(e) => setNext(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={busy}>
          Change password
        </button>
      </form>
      {done !== null && <p role="status">Password changed; {done} other session(s) ended.</p>}
      {error && <Failure error={error} />}
    </section>
  );
}

function TwoFactor({ me, onChange, held }: { me: Account; onChange(): void; held: boolean }) {
  const [offer, setOffer] = useState<{ secret: string; otpauth_url: string; qr_svg: string } | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [code, setCode] = useState('');
  const [act, error, busy] = useAction();
  const start = () => void act(async () => setOffer(await api('POST', '/me/2fa/start')));
  const confirm = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const { recovery_codes } = await api<{ recovery_codes: string[] }>('POST', '/me/2fa/confirm', { code });
      setCodes(recovery_codes);
      setOffer(null);
      setCode('');
      onChange();
    });
  };
  const turnOff = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      await api('POST', '/me/2fa/disable', { code });
      setCode('');
      onChange();
    });
  };
  return (
    <section aria-labelledby="two-factor-heading">
      <h2 id="two-factor-heading">Two-factor sign-in</h2>
      {codes && (
        <div class="once" role="status">
          <p>
            <strong>Recovery codes</strong>: shown now only. Each signs you in once if you lose your authenticator; keep them somewhere safe.
          </p>
          <ul class="codes" aria-label="Recovery codes">
            {codes.map((c) => (
              <li key={c}>
                <code>{c}</code>
              </li>
            ))}
          </ul>
          {held && (
            <p>
              {/* a full load: the page reads the session again, now with two-factor sign-in on */}
              <a href="/projects" data-external>
                Continue to the dashboard
              </a>
            </p>
          )}
        </div>
      )}
      {me.two_factor ? (
        <>
          <p>
            On. {me.recovery_codes_left} recovery code(s) left.
          </p>
          <form onSubmit={turnOff} class="inline">
            <label>
              A current code
              <input autocomplete="one-time-code" required value={code} onInput={(e) => setCode(e.currentTarget.value)} />
            </label>
            <button type="submit" disabled={busy}>
              Turn two-factor sign-in off
            </button>
          </form>
        </>
      ) : offer ? (
        <form onSubmit={confirm}>
          <p>Scan this code with an authenticator app (or enter the key by hand), then type the six-digit code it shows.</p>
          <img class="qr" src={`data:image/svg+xml;base64,${btoa(offer.qr_svg)}`} alt="QR code of the two-factor key" width={200} height={200} />
          <p>
            Key: <code aria-label="Two-factor key">{offer.secret}</code>
          </p>
          <label>
            Code from the app
            <input name="code" autocomplete="one-time-code" inputMode="numeric" required value={code} onInput={(e) => setCode(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={busy}>
            Turn on
          </button>
        </form>
      ) : (
        <>
          <p class="muted">Off. With it on, signing in also asks for a code from an authenticator app.</p>
          <button type="button" disabled={busy} onClick={start}>
            Set up two-factor sign-in
          </button>
        </>
      )}
      {error && <Failure error={error} />}
    </section>
  );
}

function Tokens() {
  const loaded = useLoad(() => api<{ tokens: Token[] }>('GET', '/me/tokens'), 'tokens');
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['project:read']);
  const [created, setCreated] = useState<string | null>(null);
  const [act, error, busy] = useAction();
  const create = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const { token } = await api<{ token: string }>('POST', '/me/tokens', { name, scopes });
      setCreated(token);
      setName('');
      loaded.reload();
    });
  };
  const revoke = (id: string) =>
    void act(async () => {
      await api('DELETE', `/me/tokens/${id}`);
      loaded.reload();
    });
  return (
    <section aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">API tokens</h2>
      <p class="muted">
        For scripts and tools: send <code>Authorization: Bearer &lt;token&gt;</code>. A token acts as you, within its scopes.
      </p>
      {created && <OnceSecret label="API token" value={created} kept="Lookout keeps only its hash." />}
      <Show loaded={loaded}>
        {({ tokens }) =>
          tokens.length === 0 ? (
            <p class="muted">No tokens.</p>
          ) : (
            <div class="scroll" tabIndex={0}>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Scopes</th>
                    <th scope="col">Token</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col">
                      <span class="sr-only">Revoke</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {tokens.map((t) => (
                    <tr key={t.id}>
                      <td>{t.name}</td>
                      <td>{t.scopes.join(', ')}</td>
                      <td>
                        <code>{t.hint}</code>
                      </td>
                      <td><Time at={t.created_at} /></td>
                      <td>{t.last_used_at ? <Time at={t.last_used_at} /> : 'never'}</td>
                      <td>
                        <button type="button" disabled={busy} onClick={() => revoke(t.id)}>
                          Revoke {t.name}
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
      <form onSubmit={create}>
        <label>
          Token name
          <input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          {SCOPES.map((scope) => (
            <label key={scope} class="check">
              <input
                type="checkbox"
                checked={scopes.includes(scope)}
                onChange={(e) => setScopes(e.currentTarget.checked ? [...scopes, scope] : scopes.filter((s) => s !== scope))}
              />{' '}
              {scope}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={busy || scopes.length === 0}>
          Create token
        </button>
      </form>
      {error && <Failure error={error} />}
    </section>
  );
}
