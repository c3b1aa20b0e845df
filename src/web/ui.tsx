/** Pieces every page uses: loading data, showing an error, a page heading, copying a key. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from './api.ts';
import { ago, percent, when } from './format.ts';

export interface Loaded<T> {
  data: T | null;
  error: ApiError | Error | null;
  reload(): void;
}

/** Runs `load` when `key` changes (and on `reload`); the last answer wins. */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: Error | null; key: string | null }>({ data: null, error: null, key: null });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    load().then(
      (data) => current && setState({ data, error: null, key }),
      (error: Error) => current && setState({ data: null, error, key }),
    );
    return () => {
      current = false;
    };
  }, [key, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  // Data loaded for another key is not shown under this one.
  return state.key === key ? { data: state.data, error: state.error, reload } : { data: null, error: null, reload };
}

export function Failure({ error }: { error: Error }) {
  const reason = error instanceof ApiError ? ` (${error.reason})` : '';
  return (
    <p class="failure" role="alert">
      {error.message}
      {reason}
    </p>
  );
}

/** The data, or a loading line, or the failure. */
export function Show<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ComponentChildren }) {
  if (loaded.error) return <Failure error={loaded.error} />;
  if (loaded.data === null) return <p class="muted" aria-live="polite">Loading…</p>;
  return <>{children(loaded.data)}</>;
}

/** The page's one h1, also the document title. */
export function Title({ children, sub }: { children: string; sub?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${children} · Lookout`;
  }, [children]);
  return (
    <header class="page-head">
      <h1>{children}</h1>
      {sub}
    </header>
  );
}

/** A secret shown once, with a button that copies it. */
export function OnceSecret({ label, value, kept = "Copy it to the installation's settings; Lookout keeps only its hash." }: { label: string; value: string; kept?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(value);
    setCopied(true);
  };
  return (
    <div class="once" role="status">
      <p>
        <strong>{label}</strong>: shown now only. {kept}
      </p>
      <code class="key" aria-label={label}>
        {value}
      </code>{' '}
      <button type="button" onClick={copy}>
        {copied ? 'Copied' : `Copy ${label.toLowerCase()}`}
      </button>
    </div>
  );
}

/** A value to copy (a DSN, a key that is not secret), with its copy button. */
export function CopyText({ label, value, block = false }: { label: string; value: string; block?: boolean }) {
  const [copied, setCopied] = useState(false);
  return (
    <>
      {block ? (
        <pre class="copy-block">
          <code>{value}</code>
        </pre>
      ) : (
        <code class="key" aria-label={label}>
          {value}
        </code>
      )}{' '}
      <button
        type="button"
        onClick={async () => {
          await navigator.clipboard.writeText(value);
          setCopied(true);
        }}
      >
        {copied ? 'Copied' : `Copy ${label}`}
      </button>
    </>
  );
}

/** Runs a change, keeping its failure to show beside the form. */
export function useAction(): [(run: () => Promise<unknown>) => Promise<void>, Error | null, boolean] {
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const act = async (run: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await run();
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  return [act, error, busy];
}

/** Runs a change, then reloads what it changed; the failure is kept to show beside the form. */
export function useChange(reload: () => void): [(run: () => Promise<unknown>) => void, Error | null, boolean] {
  const [act, error, busy] = useAction();
  const change = (run: () => Promise<unknown>) =>
    void act(async () => {
      await run();
      reload();
    });
  return [change, error, busy];
}

/** Headline figures, each a label over its value. */
export function Figures({ items }: { items: [label: string, value: ComponentChildren][] }) {
  return (
    <dl class="figures">
      {items.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** A time as how long ago it was, the time itself (UTC) on hover and for screen readers' details. */
export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <>—</>;
  return (
    <time dateTime={at} title={when(at)}>
      {ago(at)}
    </time>
  );
}

/** Bars of counts, oldest first, with a label that says what they add up to. */
export function Bars({ counts, label, width = 120, height = 24 }: { counts: number[]; label: string; width?: number; height?: number }) {
  const max = Math.max(1, ...counts);
  const bar = width / counts.length;
  return (
    <svg class="bars" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={label}>
      {counts.map((n, i) =>
        n > 0 ? <rect key={i} x={i * bar} y={height - (n / max) * height} width={Math.max(1, bar - 1)} height={(n / max) * height} /> : null,
      )}
    </svg>
  );
}

/** A crash-free rate coloured against the threshold: at or over it, within 5 points under it, further under. */
export function Rate({ rate, threshold }: { rate: number | null; threshold: number }) {
  if (rate === null) return <>—</>;
  const pct = rate * 100;
  const [tone, words] = pct >= threshold ? ['good', 'at or over'] : pct >= threshold - 5 ? ['warn', 'under'] : ['bad', 'far under'];
  return (
    <span class={`rate-${tone}`} title={`${words} the ${threshold}% threshold`}>
      {percent(rate)}
      {tone !== 'good' && <span class="sr-only"> ({words} the {threshold}% threshold)</span>}
      {tone === 'bad' && ' ⚠'}
    </span>
  );
}

/** A table of `items`, one `row` each, or the `empty` line. */
export function Listed<T>({
  label,
  empty,
  heads,
  items,
  row,
}: {
  label: string;
  empty: string;
  heads: string[];
  items: T[];
  row: (item: T) => ComponentChildren;
}) {
  if (items.length === 0) return <p class="muted">{empty}</p>;
  return (
    <div class="scroll" tabIndex={0}>
      <table aria-label={label}>
        <thead>
          <tr>
            {heads.map((h) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{items.map(row)}</tbody>
      </table>
    </div>
  );
}
