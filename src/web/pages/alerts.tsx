/** The Alerts page: sign-in burst settings, previewed on the last 24 hours before they are saved. */
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { count } from '../format.ts';
import type { Alerts, Project } from '../types.ts';
import { Failure, Show, Title, useAction, useLoad } from '../ui.tsx';
import { ProjectNav } from './projects.tsx';

interface Preview {
  attempts: number;
  current: { brute_force: number; credential_stuffing: number };
  proposed: { brute_force: number; credential_stuffing: number };
}

const FIELDS: { key: keyof Alerts; label: string; hint: string; max: number }[] = [
  { key: 'threshold', label: 'Brute-force threshold', hint: 'failed sign-ins of one actor from one address inside the window', max: 100_000 },
  { key: 'window_seconds', label: 'Window (seconds)', hint: 'how far back the attempts are counted', max: 2_592_000 },
  { key: 'cooldown_seconds', label: 'Quiet period (seconds)', hint: 'after an issue is raised, bursts add to it instead of raising another', max: 2_592_000 },
  { key: 'stuffing_threshold', label: 'Credential-stuffing threshold', hint: 'distinct actors failing from one address inside the window', max: 100_000 },
];

export function AlertsPage({ id }: { id: string }) {
  const loaded = useLoad(() => api<Project>('GET', `/projects/${id}`), `project:${id}`);
  return (
    <Show loaded={loaded}>
      {(project) => (
        <section>
          <Title sub={<ProjectNav id={id} current="alerts" />}>{`${project.name}: alerts`}</Title>
          <AlertsForm id={id} saved={project.alerts} onSaved={loaded.reload} />
        </section>
      )}
    </Show>
  );
}

function AlertsForm({ id, saved, onSaved }: { id: string; saved: Alerts; onSaved(): void }) {
  const [values, setValues] = useState<Record<keyof Alerts, string>>(() => stringify(saved));
  const [preview, setPreview] = useState<Preview | null>(null);
  const [notice, setNotice] = useState('');
  const [act, error, busy] = useAction();
  const settings = () => Object.fromEntries(FIELDS.map((f) => [f.key, Number(values[f.key])])) as unknown as Alerts;
  const edit = (key: keyof Alerts, value: string) => {
    setValues({ ...values, [key]: value });
    setPreview(null);
    setNotice('');
  };
  const runPreview = () => void act(async () => setPreview(await api<Preview>('POST', `/projects/${id}/alerts/preview`, settings())));
  const save = (event: Event) => {
    event.preventDefault();
    void act(async () => {
      await api('PUT', `/projects/${id}/alerts`, settings());
      setNotice('Saved: every API process and worker uses the new settings from now on.');
      onSaved();
    });
  };
  return (
    <form onSubmit={save}>
      {FIELDS.map((f) => (
        <label key={f.key}>
          {f.label}
          <input type="number" name={f.key} min={1} max={f.max} step={1} required value={values[f.key]} onInput={(e) => edit(f.key, e.currentTarget.value)} aria-describedby={`${f.key}-hint`} />
          <span id={`${f.key}-hint`} class="hint">
            {f.hint}
          </span>
        </label>
      ))}
      <p class="actions">
        <button type="button" disabled={busy} onClick={runPreview}>
          Preview on the last 24 hours
        </button>{' '}
        <button type="submit" disabled={busy}>
          Save alerts
        </button>
      </p>
      {error && <Failure error={error} />}
      {notice && <p role="status">{notice}</p>}
      {preview && (
        <div role="status" class="preview">
          <p>From the {count(preview.attempts)} sign-in attempts of the last 24 hours:</p>
          <table>
            <thead>
              <tr>
                <th scope="col">Settings</th>
                <th scope="col">Brute-force issues</th>
                <th scope="col">Credential-stuffing issues</th>
              </tr>
            </thead>
            <tbody>
              <tr>
                <th scope="row">Saved now</th>
                <td class="num">{preview.current.brute_force}</td>
                <td class="num">{preview.current.credential_stuffing}</td>
              </tr>
              <tr>
                <th scope="row">These settings</th>
                <td class="num" data-preview="brute_force">
                  {preview.proposed.brute_force}
                </td>
                <td class="num" data-preview="credential_stuffing">
                  {preview.proposed.credential_stuffing}
                </td>
              </tr>
            </tbody>
          </table>
        </div>
      )}
    </form>
  );
}

function stringify(alerts: Alerts): Record<keyof Alerts, string> {
  return Object.fromEntries(FIELDS.map((f) => [f.key, String(alerts[f.key])])) as Record<keyof Alerts, string>;
}
