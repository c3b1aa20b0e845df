/** The Organisation page: plan and seats with who fills them, the people lists, dashboard users, sign-in rules. */
import { useState } from 'preact/hooks';
import { api, type Session } from '../api.ts';

import type { OrganisationPage, OrgSso } from '../types.ts';
import { Failure, Figures, OnceSecret, Show, Time, Title, useAction, useChange, useLoad } from '../ui.tsx';
import { SessionTable, type SessionRow } from './account.tsx';

type Org = OrganisationPage;
type Sso = OrgSso;

const LISTS = [
  { key: 'members', label: 'Members', one: 'member' },
  { key: 'invites', label: 'Invites', one: 'invite' },
  { key: 'email_rules', label: 'Email rules', one: 'email rule' },
] as const;

export function OrganisationPage({ session }: { session: Session }) {
  const loaded = useLoad(() => api<Org>('GET', '/org'), 'org');
  const owner = session.role === 'owner';
  const [change, error, busy] = useChange(loaded.reload);
  return (
    <Show loaded={loaded}>
      {(org) => (
        <section>
          <Title>{`Organisation: ${org.name}`}</Title>
          {error && <Failure error={error} />}
          <h2>Plan and seats</h2>
          <Figures
            items={[
              ['Plan', org.plan],
              ['Seats', org.seats ?? 'unlimited'],
              ['Used', org.usage.used],
            ]}
          />
          <p>
            Used counts each person once: contacts {org.usage.contacts}, members {org.usage.members}, invites {org.usage.invites}, email rules {org.usage.email_rules}.
          </p>
          {owner && <PlanForm org={org} busy={busy} onSave={(set) => change(() => api('PATCH', '/org', set))} />}
          {LISTS.map((list) => (
            <section key={list.key} aria-labelledby={`list-${list.key}`}>
              <h2 id={`list-${list.key}`}>{list.label}</h2>
              {org[list.key].length === 0 ? (
                <p class="muted">None.</p>
              ) : (
                <ul class="people">
                  {org[list.key].map((email) => (
                    <li key={email}>
                      {email}{' '}
                      {owner && (
                        <button type="button" disabled={busy} onClick={() => change(() => api('DELETE', `/org/people/${list.key}/${encodeURIComponent(email)}`))}>
                          Remove {email} from {list.label.toLowerCase()}
                        </button>
                      )}
                    </li>
                  ))}
                </ul>
              )}
              {owner && <AddPerson label={list.one} busy={busy} onAdd={(email) => change(() => api('POST', '/org/people', { list: list.key, email }))} />}
            </section>
          ))}
          <h2>Dashboard users</h2>
          <Users org={org} session={session} onChange={loaded.reload} />
          {owner && <Security org={org} busy={busy} onSave={(require_2fa) => change(() => api('PATCH', '/org', { require_2fa }))} />}
          <SingleSignOn owner={owner} />
        </section>
      )}
    </Show>
  );
}

function PlanForm({ org, busy, onSave }: { org: Org; busy: boolean; onSave(set: { plan: string; seats: number | null }): void }) {
  const [plan, setPlan] = useState(org.plan);
  const [seats, setSeats] = useState(org.seats === null ? '' : String(org.seats));
  const submit = (event: Event) => {
    event.preventDefault();
    onSave({ plan, seats: seats === '' ? null : Number(seats) });
  };
  return (
    <form onSubmit={submit} class="inline">
      <label>
        Plan
        <input required maxLength={64} value={plan} onInput={(e) => setPlan(e.currentTarget.value)} />
      </label>
      <label>
        Seats (empty: unlimited)
        <input type="number" min={0} step={1} value={seats} onInput={(e) => setSeats(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={busy}>
        Save plan
      </button>
    </form>
  );
}

function AddPerson({ label, busy, onAdd }: { label: string; busy: boolean; onAdd(email: string): void }) {
  const [email, setEmail] = useState('');
  const submit = (event: Event) => {
    event.preventDefault();
    onAdd(email);
    setEmail('');
  };
  return (
    <form onSubmit={submit} class="inline">
      <label>
        New {label} (email)
        <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={busy}>
        Add {label}
      </button>
    </form>
  );
}

/** The organisation's users: who has two-factor on, when each last signed in, their sessions; an owner invites, ends and disables. */
function Users({ org, session, onChange }: { org: Org; session: Session; onChange(): void }) {
  const owner = session.role === 'owner';
  const [open, setOpen] = useState<string | null>(null);
  const [invite, setInvite] = useState<string | null>(null);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'owner' | 'member'>('member');
  const [change, error, busy] = useChange(onChange);
  const add = (event: Event) => {
    event.preventDefault();
    change(async () => {
      const added = await api<{ invite_url: string }>('POST', '/org/users', { email, role });
      setInvite(added.invite_url);
      setEmail('');
    });
  };
  return (
    <>
      {error && <Failure error={error} />}
      <div class="scroll" tabIndex={0}>
        <table>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Password set</th>
              <th scope="col">Two-factor</th>
              <th scope="col">Last sign-in</th>
              <th scope="col">Sessions</th>
              {owner && <th scope="col">Access</th>}
            </tr>
          </thead>
          <tbody>
            {org.users.map((u) => (
              <tr key={u.email}>
                <td>{u.email}</td>
                <td>{u.role}</td>
                <td>{u.active ? 'yes' : 'not yet'}</td>
                <td>{u.two_factor ? 'on' : 'off'}</td>
                <td><Time at={u.last_sign_in} /></td>
                <td>
                  {owner && u.sessions > 0 ? (
                    <button type="button" aria-expanded={open === u.email} onClick={() => setOpen(open === u.email ? null : u.email)}>
                      {u.sessions} open
                    </button>
                  ) : (
                    u.sessions
                  )}
                </td>
                {owner && (
                  <td>
                    {u.email === session.email ? (
                      'you'
                    ) : (
                      <button type="button" disabled={busy} onClick={() => change(() => api('PATCH', `/org/users/${encodeURIComponent(u.email)}`, { disabled: !u.disabled }))}>
                        {u.disabled ? `Enable ${u.email}` : `Disable ${u.email}`}
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {owner && open && <UserSessions email={open} onChange={onChange} />}
      {owner && (
        <form onSubmit={add} class="inline">
          <label>
            New user (email)
            <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
          </label>
          <label>
            Role
            <select value={role} onChange={(e) => setRole(e.currentTarget.value as 'owner' | 'member')}>
              <option value="member">member</option>
              <option value="owner">owner</option>
            </select>
          </label>
          <button type="submit" disabled={busy}>
            Invite user
          </button>
        </form>
      )}
      {invite && <OnceSecret label="Invite link" value={invite} kept="Send it to the new user: it sets their password and works for 24 hours." />}
    </>
  );
}

function UserSessions({ email, onChange }: { email: string; onChange(): void }) {
  const path = `/org/users/${encodeURIComponent(email)}/sessions`;
  const loaded = useLoad(() => api<{ sessions: SessionRow[] }>('GET', path), path);
  const [change, error, busy] = useChange(() => {
    loaded.reload();
    onChange();
  });
  return (
    <section aria-label={`Sessions of ${email}`}>
      <h3>Sessions of {email}</h3>
      {error && <Failure error={error} />}
      <Show loaded={loaded}>
        {({ sessions }) => (
          <>
            <SessionTable sessions={sessions} busy={busy} onEnd={(id) => change(() => api('DELETE', `${path}/${id}`))} />
            {sessions.length > 0 && (
              <button type="button" disabled={busy} onClick={() => change(() => api('DELETE', path))}>
                End every session of {email}
              </button>
            )}
          </>
        )}
      </Show>
    </section>
  );
}

function Security({ org, busy, onSave }: { org: Org; busy: boolean; onSave(require2fa: boolean): void }) {
  return (
    <section aria-labelledby="security-heading">
      <h2 id="security-heading">Two-factor sign-in</h2>
      <p>
        {org.require_2fa
          ? 'Required: a user without it can do nothing but turn it on.'
          : 'Not required: each user chooses (Account page).'}{' '}
        <button type="button" disabled={busy} onClick={() => onSave(!org.require_2fa)}>
          {org.require_2fa ? 'Stop requiring two-factor sign-in' : 'Require two-factor sign-in'}
        </button>
      </p>
    </section>
  );
}

function SingleSignOn({ owner }: { owner: boolean }) {
  const loaded = useLoad(() => api<Sso>('GET', '/org/sso'), 'sso');
  return (
    <section aria-labelledby="sso-heading">
      <h2 id="sso-heading">Single sign-on (OpenID Connect)</h2>
      <Show loaded={loaded}>{(data) => <SsoForm data={data} owner={owner} onSaved={loaded.reload} />}</Show>
    </section>
  );
}

function SsoForm({ data, owner, onSaved }: { data: Sso; owner: boolean; onSaved(): void }) {
  const [issuer, setIssuer] = useState(data.sso?.issuer ?? '');
  const [clientId, setClientId] = useState(data.sso?.client_id ?? '');
  const [secret, setSecret] = useState('');
  const [domains, setDomains] = useState(data.sso?.domains.join(', ') ?? '');
  const [role, setRole] = useState<'owner' | 'member'>(data.sso?.default_role ?? 'member');
  const [required, setRequired] = useState(data.sso?.required ?? false);
  const [act, error, busy] = useAction();
  const save = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      const list = domains.split(/[\s,]+/).filter(Boolean);
      await api('PUT', '/org/sso', { issuer, client_id: clientId, ...(secret ? { client_secret: secret } : {}), domains: list, default_role: role, required });
      setSecret('');
      onSaved();
    });
  };
  const remove = () =>
    void act(async () => {
      await api('DELETE', '/org/sso');
      onSaved();
    });
  return (
    <>
      <p>
        {data.sso ? `On: people of ${data.sso.domains.join(', ')} sign in through ${data.sso.issuer}${data.sso.required ? ' (members only that way)' : ''}.` : 'Off.'} Register
        this redirect URI with the provider: <code>{data.redirect_uri}</code>
      </p>
      {owner && (
        <form onSubmit={save}>
          <label>
            Issuer URL
            <input type="url" required value={issuer} onInput={(e) => setIssuer(e.currentTarget.value)} />
          </label>
          <label>
            Client ID
            <input required value={clientId} onInput={(e) => setClientId(e.currentTarget.value)} />
          </label>
          <label>
            Client secret {data.sso && '(empty: keep the stored one)'}
            <input type="password" autocomplete="off" required={!data.sso} value={secret} onInput={(e) => setSecret(e.currentTarget.value)} />
          </label>
          <label>
            Email domains (comma-separated)
            <input required value={domains} onInput={(e) => setDomains(e.currentTarget.value)} />
          </label>
          <label>
            Role of people who join through it
            <select value={role} onChange={(e) => setRole(e.currentTarget.value as 'owner' | 'member')}>
              <option value="member">member</option>
              <option value="owner">owner</option>
            </select>
          </label>
          <label class="check">
            <input type="checkbox" checked={required} onChange={(e) => setRequired(e.currentTarget.checked)} /> Members sign in only through it (owners keep their password)
          </label>
          <button type="submit" disabled={busy}>
            Save single sign-on
          </button>{' '}
          {data.sso && (
            <button type="button" disabled={busy} onClick={remove}>
              Turn single sign-on off
            </button>
          )}
        </form>
      )}
      {error && <Failure error={error} />}
    </>
  );
}
