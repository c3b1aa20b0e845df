"""Debian's sentry-python 1.9 reporting to Lookout (test/sentry-clients.test.ts): one scenario per run.

usage: python3 python-client.py <dsn> <scenario> <tag>
"""
import logging
import sys
import threading
import urllib.request
from wsgiref.simple_server import make_server, WSGIRequestHandler

import sentry_sdk
from sentry_sdk.integrations.wsgi import SentryWsgiMiddleware

dsn, scenario, tag = sys.argv[1], sys.argv[2], sys.argv[3]
sentry_sdk.init(dsn=dsn, release="shop@1.4.2", environment="production", send_default_pii=True, debug=False)
sentry_sdk.set_tag("scenario", tag)
sentry_sdk.set_user({"id": "42", "email": "ada@example.com"})
sentry_sdk.add_breadcrumb(category="cart", message="added 3 items", level="info")


def checkout(cart_total, api_token):
    discount = None
    return cart_total / discount  # TypeError


if scenario == "exception":
    try:
        checkout(120, api_token="tok-secret-123")
    except Exception:
        sentry_sdk.capture_exception()
elif scenario == "message":
    sentry_sdk.capture_message("py message %s" % tag, level="warning")
elif scenario == "logging":
    logging.basicConfig(level=logging.INFO)
    logging.getLogger("shop.payments").error("py log error %s for order %d", tag, 1042)
elif scenario == "wsgi":
    def app(environ, start_response):
        raise ValueError("wsgi failure " + tag)

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args):
            pass

    server = make_server("127.0.0.1", 0, SentryWsgiMiddleware(app), handler_class=Quiet)
    threading.Thread(target=server.handle_request, daemon=True).start()
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/cart/checkout?step=2" % server.server_port, timeout=10)
    except Exception:
        pass
else:
    sys.exit("unknown scenario " + scenario)

sentry_sdk.flush(timeout=10)
