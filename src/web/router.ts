/** Path routing in the page: links and `navigate` push history; the server serves the same page for each path. */
import { useEffect, useState } from 'preact/hooks';

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** The current path and query, re-rendered on every navigation. */
export function useLocation(): URL {
  const [url, setUrl] = useState(() => new URL(location.href));
  useEffect(() => {
    const changed = () => setUrl(new URL(location.href));
    addEventListener('popstate', changed);
    return () => removeEventListener('popstate', changed);
  }, []);
  return url;
}

/** Plain clicks on same-origin links navigate in the page instead of loading it again. */
export function interceptLinks(): void {
  document.addEventListener('click', (event) => {
    const link = (event.target as Element | null)?.closest?.('a');
    if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    if (link.target || link.hasAttribute('download') || link.dataset.external !== undefined) return;
    const to = new URL(link.href);
    if (to.origin !== location.origin) return;
    event.preventDefault();
    navigate(to.pathname + to.search + to.hash);
  });
}
