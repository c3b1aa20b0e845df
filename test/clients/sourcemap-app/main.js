// A web shop bundled minified with source maps by esbuild (test/sourcemaps.test.ts), reporting with @sentry/browser;
// DSN, release and dist come from the page's query string. Clicking "Add to cart" throws in cart.js.
import * as Sentry from '@sentry/browser';
import { addToCart } from './cart.js';

const query = new URL(location.href).searchParams;
Sentry.init({ dsn: query.get('dsn'), release: query.get('release') || undefined, dist: query.get('dist') || undefined, tracesSampleRate: 0 });

function onClickAddToCart() {
  const cart = { items: [] };
  return addToCart(cart, { name: 'desk lamp' });
}

document.querySelector('#add').addEventListener('click', async () => {
  try {
    onClickAddToCart();
  } catch (err) {
    window.eventId = Sentry.captureException(err);
    await Sentry.flush(5000);
    window.done = true;
  }
});
window.ready = true;
