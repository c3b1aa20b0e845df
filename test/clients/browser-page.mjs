// @sentry/browser in a page served to Chromium (test/sentry-clients.test.ts): a captured error with a breadcrumb,
// a tag and the user set, then user feedback about it (Sentry.captureFeedback). The test bundles this file with
// esbuild from the npm package it installed; the DSN comes from the page's query string.
import * as Sentry from '@sentry/browser';

const dsn = new URL(location.href).searchParams.get('dsn');
Sentry.init({ dsn, release: 'web@1.0.0', environment: 'production', tracesSampleRate: 0 });
Sentry.setTag('scenario', 'browser');
Sentry.setUser({ id: '11', email: 'web@example.com' });
Sentry.addBreadcrumb({ category: 'ui.click', message: 'clicked Add to cart' });

function addToCart(cart) {
  return cart.items.push('sku-9'); // TypeError: cart is null
}

try {
  addToCart(null);
} catch (err) {
  const eventId = Sentry.captureException(err);
  Sentry.captureFeedback({ message: 'The button did nothing', name: 'Web User', email: 'web@example.com', associatedEventId: eventId });
  window.eventId = eventId;
}
await Sentry.flush(5000);
window.done = true;
