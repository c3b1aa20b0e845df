// npm's raven 2 (the legacy Node client) reporting to Lookout (test/sentry-clients.test.ts).
// usage: NODE_PATH=<its node_modules> node raven-node.cjs <dsn> <tag>
const Raven = require('raven');
const [dsn, tag] = process.argv.slice(2);

Raven.config(dsn, { release: 'shop@3.0.0', environment: 'production', autoBreadcrumbs: false }).install();
Raven.setContext({ user: { id: '9', email: 'node@example.com' }, tags: { scenario: tag } });
Raven.captureBreadcrumb({ category: 'cart', message: 'raven-node breadcrumb' });

function applyCoupon(cart) {
  return cart.coupon.code.toUpperCase(); // TypeError: cart.coupon is undefined
}

try {
  applyCoupon({});
} catch (err) {
  Raven.captureException(err, (sendErr) => {
    if (sendErr) {
      console.error('raven could not send:', sendErr);
      process.exit(1);
    }
    process.exit(0);
  });
}
