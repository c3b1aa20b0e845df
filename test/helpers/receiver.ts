/**
 * A real webhook receiver on a free loopback port: it records every request
 * (headers, raw body, when) and answers as the test tells it (by default
 * 200), so tests see exactly what Lookout sends over the wire.
 */
import http from 'node:http';
import { afterAll, beforeAll } from 'vitest';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '../../src/domain/notifications.ts';

export interface Received {
  at: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: any;
  event: string;
  delivery: string;
}

/** How to answer the nth request (0-based) and the request itself; 'hang' never answers. */
export type Answer = (n: number, req: Received) => number | 'hang';

export async function startReceiver(answer: Answer = () => 200) {
  const received: Received[] = [];
  const hanging: http.ServerResponse[] = [];
  let respond = answer;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const r: Received = {
        at: Date.now(),
        path: req.url ?? '',
        headers: req.headers,
        raw,
        body: JSON.parse(raw),
        event: String(req.headers['x-lookout-event']),
        delivery: String(req.headers['x-lookout-delivery']),
      };
      const n = received.length;
      received.push(r);
      const status = respond(n, r);
      if (status === 'hang') {
        hanging.push(res);
        return;
      }
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'thanks' : `refused ${n}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    /** Requests of one event kind (X-Lookout-Event). */
    of: (event: string) => received.filter((r) => r.event === event),
    answer(next: Answer) {
      respond = next;
    },
    /** Whether a request carries a valid signature for the secret, made now. */
    signed: (r: Received, secret: string) => verifySignature(secret, r.raw, String(r.headers['x-lookout-signature']), new Date()),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** A receiver for a test file: started before its tests (`use` gets it) and closed after them. */
export function withReceiver(use: (receiver: Receiver) => void): void {
  let receiver: Receiver | undefined;
  beforeAll(async () => {
    receiver = await startReceiver();
    use(receiver);
  });
  afterAll(async () => {
    await receiver?.close();
  });
}
