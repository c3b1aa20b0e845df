// @sentry/browser with browserTracingIntegration in a page served to Chromium (test/traces-clients.test.ts): the
// page-load transaction with its web vitals (a late banner shifts the layout, for CLS), then a slow click whose
// INP the SDK sends as a span of its own when the page is hidden. Each transaction sent is noted in `window.sent`
// (its name and measurements) for the test to compare with. The DSN comes from the page's query string.
import * as Sentry from '@sentry/browser';

window.sent = [];
const dsn = new URL(location.href).searchParams.get('dsn');
Sentry.init({
  dsn,
  release: 'web@2.0.0',
  environment: 'production',
  tracesSampleRate: 1,
  integrations: [Sentry.browserTracingIntegration({ idleTimeout: 500 })],
  beforeSendTransaction(event) {
    window.sent.push({ name: event.transaction, op: event.contexts?.trace?.op, measurements: event.measurements, trace_id: event.contexts?.trace?.trace_id });
    return event;
  },
});

document.querySelector('#buy').addEventListener('click', () => {
  const until = performance.now() + 150;
  while (performance.now() < until); // a slow handler: the interaction's INP
  document.querySelector('#buy').textContent = 'Added';
});
// what the test waits for before it clicks: a shift or a paint after an input would not count for CLS or LCP
window.shifted = false;
window.painted = false;
new PerformanceObserver(() => (window.shifted = true)).observe({ type: 'layout-shift', buffered: true });
new PerformanceObserver(() => (window.painted = true)).observe({ type: 'largest-contentful-paint', buffered: true });
setTimeout(() => {
  const banner = document.createElement('div');
  banner.style.height = '200px';
  banner.textContent = 'Free shipping today';
  document.body.prepend(banner); // shifts the page down: CLS
}, 100);
