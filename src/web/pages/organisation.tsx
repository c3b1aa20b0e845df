/** The Organisation page: plan and seats with who fills them, the people lists, dashboard users. */
import { useState } from 'preact/hooks';
import { api, type Session } from '../api.ts';
import { Failure, Figures, Show, Title, useAction, useLoad } from '../ui.tsx';

interface Org {
  id: string;
  name: string;
  plan: string;
  seats: number | null;
  members: string[];
  invites: string[];
  email_rules: string[];
  usage: { used: number; contacts: number; members: number; invites: number; email_rules: number };
  users: { email: string; role: 'owner' | 'member'; active: boolean }[];
}

const LISTS = [
  { key: 'members', label: 'Members', one: 'member' },
  { key: 'invites', label: 'Invites', one: 'invite' },
  { key: 'email_rules', label: 'Email rules', one: 'email rule' },
] as const;

export function OrganisationPage({ session }: { session: Session }) {
  const loaded = useLoad(() => api<Org>('GET', '/org'), 'org');
  const owner = session.role === 'owner';
  const [act, error, busy] = useAction();
  const change = (run: () => Promise<unknown>) =>
    void act(async () => {
      await run();
      loaded.reload();
    });
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
          <table>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Password set</th>
              </tr>
            </thead>
            <tbody>
              {org.users.map((u) => (
                <tr key={u.email}>
                  <td>{u.email}</td>
                  <td>{u.role}</td>
                  <td>{u.active ? 'yes' : 'not yet'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p class="muted">
            New users: <code>npx lookout admin user add --org {org.id} --email E --role owner|member</code>.
          </p>
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
