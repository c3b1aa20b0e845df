/**
 * One error event, laid out for debugging: the exception chain (each with
 * its mechanism and stack, in-app frames open with their source lines and
 * variables, library frames folded), the breadcrumbs as a timeline,
 * request, user, tags, contexts and extra as tables, what was trimmed or
 * filtered, and the raw JSON behind a toggle.
 */
import { useState } from 'preact/hooks';
import { Time } from './ui.tsx';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const text = (v: unknown): string => (typeof v === 'string' ? v : v === null || v === undefined ? '' : JSON.stringify(v));

interface Frame {
  filename?: string;
  abs_path?: string;
  function?: string;
  module?: string;
  lineno?: number;
  colno?: number;
  in_app?: boolean;
  context_line?: string;
  pre_context?: string[];
  post_context?: string[];
  vars?: Obj;
  /** what source maps did to the frame (issue 52): mapped by which map and how, or why it was not */
  data?: { symbolicated?: boolean; sourcemap?: string; resolved_with?: string; sourcemap_error?: { reason?: string; message?: string } };
}

/** A table of an object's keys and values; nested values as JSON. */
export function KeyValues({ value, label }: { value: unknown; label: string }) {
  const entries = isObj(value) ? Object.entries(value) : Array.isArray(value) ? value.filter((p) => Array.isArray(p) && p.length === 2).map((p) => [text((p as unknown[])[0]), (p as unknown[])[1]] as const) : [];
  if (entries.length === 0) return <p class="muted">None.</p>;
  return (
    <div class="scroll" tabIndex={0}>
      <table class="kv">
        <caption class="sr-only">{label}</caption>
        <tbody>
          {entries.map(([k, v]) => (
            <tr key={k}>
              <th scope="row">{k}</th>
              <td>
                <code>{text(v)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Source({ frame }: { frame: Frame }) {
  if (frame.context_line === undefined) return null;
  const pre = frame.pre_context ?? [];
  const post = frame.post_context ?? [];
  const first = (frame.lineno ?? pre.length + 1) - pre.length;
  const lines = [...pre, frame.context_line, ...post];
  return (
    <ol class="source" start={first} tabIndex={0} aria-label={`Source around line ${frame.lineno ?? '?'}`}>
      {lines.map((line, i) => (
        <li key={i} class={i === pre.length ? 'current' : undefined} aria-current={i === pre.length ? 'true' : undefined}>
          <code>{line || ' '}</code>
        </li>
      ))}
    </ol>
  );
}

function FrameView({ frame }: { frame: Frame }) {
  const where = frame.module || frame.filename || frame.abs_path || '?';
  const title = `${where} in ${frame.function || '?'}${frame.lineno !== undefined ? ` at line ${frame.lineno}` : ''}${frame.colno ? `:${frame.colno}` : ''}`;
  const detail = frame.context_line !== undefined || isObj(frame.vars);
  const unmapped = frame.data?.sourcemap_error;
  return (
    <li class={frame.in_app ? 'frame in-app' : 'frame'}>
      {unmapped && <p class="warn">Not mapped by a source map: {unmapped.message ?? unmapped.reason}</p>}
      {detail ? (
        <details open={frame.in_app === true}>
          <summary>
            <code>{title}</code> {frame.in_app && <span class="badge">in app</span>}
          </summary>
          <Source frame={frame} />
          {frame.data?.symbolicated && (
            <p class="muted">
              Mapped through <code>{frame.data.sourcemap}</code> ({frame.data.resolved_with === 'debug-id' ? 'by debug ID' : 'by URL in the release'})
            </p>
          )}
          {isObj(frame.vars) && (
            <>
              <h5>Variables</h5>
              <KeyValues value={frame.vars} label={`Variables of ${frame.function ?? 'the frame'}`} />
            </>
          )}
        </details>
      ) : (
        <code>{title}</code>
      )}
    </li>
  );
}

/** A stack, the crashing frame first; runs of library frames folded behind a button. */
function Stack({ frames }: { frames: Frame[] }) {
  const [open, setOpen] = useState(false);
  const newestFirst = [...frames].reverse();
  const libraries = newestFirst.filter((f) => !f.in_app).length;
  const anyInApp = libraries < newestFirst.length;
  const shown = open || !anyInApp ? newestFirst : newestFirst.filter((f) => f.in_app);
  return (
    <>
      {anyInApp && libraries > 0 && (
        <button type="button" class="link" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? `Hide ${libraries} library frames` : `Show ${libraries} library frames`}
        </button>
      )}
      <ol class="frames">
        {shown.map((f, i) => (
          <FrameView key={i} frame={f} />
        ))}
      </ol>
    </>
  );
}

/** A stack mapped through source maps: the original frames, the minified ones behind a toggle, what was not mapped. */
function MappedStack({ frames, raw }: { frames: Frame[]; raw: Frame[] }) {
  const [minified, setMinified] = useState(false);
  const unmapped = frames.filter((f) => f.data?.sourcemap_error).length;
  return (
    <>
      <p class="muted">
        {unmapped > 0 ? `${unmapped} of ${frames.length} frames could not be mapped by a source map (each says why). ` : 'Mapped by source maps. '}
        <button type="button" class="link" aria-pressed={minified} onClick={() => setMinified(!minified)}>
          {minified ? 'Show the original frames' : 'Show the minified frames'}
        </button>
      </p>
      <Stack frames={minified ? raw : frames} />
    </>
  );
}

function Exceptions({ event }: { event: Obj }) {
  const values = list(isObj(event.exception) ? event.exception.values : undefined).filter(isObj);
  if (values.length === 0) return null;
  // Sentry's order is innermost first; the exception raised (the last) is shown first.
  return (
    <section aria-labelledby="exceptions">
      <h2 id="exceptions">{values.length > 1 ? 'Exceptions' : 'Exception'}</h2>
      {[...values].reverse().map((v, i) => {
        const mechanism = isObj(v.mechanism) ? v.mechanism : null;
        const frames = list(isObj(v.stacktrace) ? v.stacktrace.frames : undefined).filter(isObj) as Frame[];
        const raw = list(isObj(v.raw_stacktrace) ? v.raw_stacktrace.frames : undefined).filter(isObj) as Frame[];
        return (
          <article key={i} class="exception">
            <h3>
              {text(v.type) || 'Error'}
              {v.value ? `: ${text(v.value)}` : ''}
            </h3>
            <p class="muted">
              {i > 0 && 'Caused the one above. '}
              {mechanism && (
                <span class={mechanism.handled === false ? 'badge bad' : 'badge'}>
                  {mechanism.handled === false ? 'unhandled' : 'handled'}
                  {mechanism.type ? ` (${text(mechanism.type)})` : ''}
                </span>
              )}
              {v.module ? ` in ${text(v.module)}` : ''}
            </p>
            {frames.length === 0 ? <p class="muted">No stack trace.</p> : raw.length > 0 ? <MappedStack frames={frames} raw={raw} /> : <Stack frames={frames} />}
          </article>
        );
      })}
    </section>
  );
}

function Breadcrumbs({ event }: { event: Obj }) {
  const crumbs = list(isObj(event.breadcrumbs) ? event.breadcrumbs.values : event.breadcrumbs).filter(isObj);
  if (crumbs.length === 0) return null;
  const time = (t: unknown) => (typeof t === 'number' ? new Date(t * 1000).toISOString() : typeof t === 'string' ? t : '');
  return (
    <section aria-labelledby="breadcrumbs">
      <h2 id="breadcrumbs">Breadcrumbs</h2>
      <div class="scroll" tabIndex={0}>
        <table class="breadcrumbs">
          <caption class="sr-only">What happened before the event, oldest first</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Category</th>
              <th scope="col">Level</th>
              <th scope="col">Message</th>
              <th scope="col">Data</th>
            </tr>
          </thead>
          <tbody>
            {crumbs.map((c, i) => (
              <tr key={i} class={`level-${text(c.level) || 'info'}`}>
                <td>{time(c.timestamp).replace('T', ' ').slice(0, 23)}</td>
                <td>{text(c.category) || text(c.type) || '—'}</td>
                <td>{text(c.level) || 'info'}</td>
                <td>{crumbMessage(c)}</td>
                <td>{isObj(c.data) ? <CrumbData data={c.data} /> : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** A breadcrumb's message; an HTTP breadcrumb without one reads as its method, URL and status. */
function crumbMessage(c: Obj): string {
  const message = text(c.message);
  if (message || !isObj(c.data)) return message;
  const { method, url, status_code } = c.data;
  if (url === undefined) return '';
  return [text(method), text(url), status_code === undefined ? '' : `→ ${text(status_code)}`].filter(Boolean).join(' ');
}

/** A breadcrumb's data as key: value lines (a value that is not text as its JSON). */
function CrumbData({ data }: { data: Obj }) {
  const entries = Object.entries(data);
  if (entries.length === 0) return null;
  return (
    <dl class="crumb-data">
      {entries.map(([k, v]) => [
        <dt key={`${k}-k`}>{k}</dt>,
        <dd key={`${k}-v`}>
          <code>{text(v)}</code>
        </dd>,
      ])}
    </dl>
  );
}

/** One part of the request, when sent: a table of its keys, or the text as sent. */
function Part({ title, label, value }: { title: string; label: string; value: unknown }) {
  if (value === undefined || value === null) return null;
  return (
    <>
      <h3>{title}</h3>
      {typeof value === 'object' ? <KeyValues value={value} label={label} /> : <code>{text(value)}</code>}
    </>
  );
}

function Request({ event }: { event: Obj }) {
  const r = event.request;
  if (!isObj(r)) return null;
  return (
    <section aria-labelledby="request">
      <h2 id="request">Request</h2>
      <p>
        <code data-field="request-url">
          {text(r.method)} {text(r.url)}
        </code>
      </p>
      <Part title="Query" label="Query" value={r.query_string} />
      <Part title="Headers" label="Request headers" value={r.headers} />
      <Part title="Cookies" label="Cookies" value={r.cookies} />
      <Part title="Data" label="Request data" value={r.data} />
    </section>
  );
}

/** `project`: the event's project, for the link to its trace (issue 69). */
export function EventView({ event, project }: { event: Obj; project?: string }) {
  const [raw, setRaw] = useState(false);
  const meta = isObj(event._meta) ? Object.entries(event._meta) : [];
  const contexts = isObj(event.contexts) ? Object.entries(event.contexts) : [];
  const trace = isObj(event.contexts) && isObj(event.contexts.trace) && typeof event.contexts.trace.trace_id === 'string' ? event.contexts.trace.trace_id : null;
  return (
    <div class="event">
      <dl class="fields">
        <dt>Event</dt>
        <dd>
          <code>{text(event.event_id)}</code>
        </dd>
        <dt>Time</dt>
        <dd>
          <Time at={text(event.timestamp)} />
        </dd>
        {(['release', 'environment', 'level', 'platform', 'logger', 'server_name', 'transaction'] as const)
          .filter((k) => event[k] !== undefined && event[k] !== null)
          .flatMap((k) => [<dt key={`${k}-t`}>{k.replace('_', ' ')}</dt>, <dd key={`${k}-d`}>{text(event[k])}</dd>])}
        {trace && project && (
          <>
            <dt>Trace</dt>
            <dd>
              <a href={`/projects/${project}/traces/${trace}?at=${encodeURIComponent(text(event.timestamp))}`}>
                <code>{trace}</code>
              </a>
            </dd>
          </>
        )}
      </dl>
      {typeof event.message === 'string' && !isObj(event.exception) && <p class="message">{event.message}</p>}
      <Exceptions event={event} />
      <Breadcrumbs event={event} />
      <Request event={event} />
      <section aria-labelledby="tags">
        <h2 id="tags">Tags</h2>
        <KeyValues value={event.tags} label="Tags" />
      </section>
      {isObj(event.user) && (
        <section aria-labelledby="user">
          <h2 id="user">User</h2>
          <KeyValues value={event.user} label="User" />
        </section>
      )}
      {contexts.length > 0 && (
        <section aria-labelledby="contexts">
          <h2 id="contexts">Contexts</h2>
          {contexts.map(([name, value]) => (
            <div key={name}>
              <h3>{name}</h3>
              <KeyValues value={value} label={`Context ${name}`} />
            </div>
          ))}
        </section>
      )}
      {isObj(event.extra) && (
        <section aria-labelledby="extra">
          <h2 id="extra">Extra</h2>
          <KeyValues value={event.extra} label="Extra" />
        </section>
      )}
      {meta.length > 0 && (
        <section aria-labelledby="trimmed">
          <h2 id="trimmed">Trimmed and filtered</h2>
          <ul class="meta">
            {meta.map(([path, note]) => (
              <li key={path}>
                <code>{path}</code>: {describeNote(note)}
              </li>
            ))}
          </ul>
        </section>
      )}
      <p>
        <button type="button" aria-expanded={raw} onClick={() => setRaw(!raw)}>
          {raw ? 'Hide raw JSON' : 'Show raw JSON'}
        </button>
      </p>
      {raw && (
        <pre class="payload" tabIndex={0} aria-label="The event as stored, as JSON">
          {JSON.stringify(event, null, 2)}
        </pre>
      )}
    </div>
  );
}

function describeNote(note: unknown): string {
  const n = isObj(note) ? note : {};
  const len = typeof n.len === 'number' ? ` (was ${n.len.toLocaleString('en')})` : '';
  switch (n.rem) {
    case 'filtered':
      return 'filtered: it looked like a secret';
    case 'trimmed':
      return `cut to the limit${len}`;
    case 'frames':
      return `frames kept: the 50 oldest and the 200 newest${len}`;
    case 'breadcrumbs':
      return `the newest 100 kept${len}`;
    case 'size':
      return `left out: the event was over 256 KiB${len}`;
    case 'depth':
      return 'nested too deep; cut';
    case 'level':
      return `level ${text(n.value)} read as a known level`;
    case 'timestamp':
      return 'no time sent: the time received';
    default:
      return text(n.rem);
  }
}
