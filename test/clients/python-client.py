"""Debian's sentry-python 1.9 reporting to Lookout (test/sentry-clients.test.ts, test/traces-clients.test.ts): one
scenario per run.

usage: python3 python-client.py <dsn> <scenario> <tag>

traces: tracing on; twelve transactions of one task, each with a query, and one that fails with its error captured
inside it. What the SDK sent is printed as JSON (a transport that notes each transaction before sending it), so the
test computes what Lookout should show independently.
"""
import json
import logging
import sys
import time
import threading
import urllib.request
from wsgiref.simple_server import make_server, WSGIRequestHandler

import sentry_sdk
from sentry_sdk.integrations.wsgi import SentryWsgiMiddleware
from sentry_sdk.transport import HttpTransport

dsn, scenario, tag = sys.argv[1], sys.argv[2], sys.argv[3]
sent = []


class NotingTransport(HttpTransport):
    """Sends as the SDK's own transport does, noting each transaction first."""

    def capture_envelope(self, envelope):
        for item in envelope.items:
            if item.headers.get("type") == "transaction":
                tx = item.payload.json
                trace = tx.get("contexts", {}).get("trace", {})
                sent.append({"name": tx.get("transaction"), "start": tx.get("start_timestamp"), "end": tx.get("timestamp"), "status": trace.get("status"), "trace_id": trace.get("trace_id")})
        return HttpTransport.capture_envelope(self, envelope)


tracing = {"traces_sample_rate": 1.0, "transport": NotingTransport} if scenario == "traces" else {}
sentry_sdk.init(dsn=dsn, release="shop@1.4.2", environment="production", send_default_pii=True, debug=False, **tracing)
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
elif scenario == "traces":
    for i in range(12):
        with sentry_sdk.start_transaction(op="task", name="process-order", source="task") as transaction:
            with transaction.start_child(op="db", description="SELECT * FROM orders WHERE id = %d" % i):
                time.sleep(0.002)
            time.sleep(0.005 * (i % 4))
    with sentry_sdk.start_transaction(op="task", name="charge-card", source="task") as transaction:
        try:
            raise ValueError("card declined " + tag)
        except ValueError:
            sentry_sdk.capture_exception()
        transaction.set_status("internal_error")
else:
    sys.exit("unknown scenario " + scenario)

sentry_sdk.flush(timeout=10)
if scenario == "traces":
    print(json.dumps(sent))
