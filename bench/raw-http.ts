/**
 * The Node load generator's HTTP client (bench/load.ts; bench:storm's is tools/loadgen): keep-alive connections,
 * one request at a time on each, as an SDK's transport holds them, each request written in one piece and each
 * answer read only for its status, its length and (when asked) its body. Node's own client (`http.request` through
 * an `http.Agent`) cost the generator about 90 µs a request: in bench:storm, 6,000 requests a second took 56–66% of
 * the two cores Lookout runs on, and its own event loop fell 130 ms behind, so the storm measured the generator as
 * much as the stack. The same load through this one costs a fraction of that (docs/performance.md).
 *
 * Answers carry `Content-Length` or are chunked (Koa's and Node's), or end with the connection. A request that has
 * not been answered `timeoutMs` after it was written fails as `CLIENT_TIMEOUT`, as an SDK gives up.
 */
import net from 'node:net';

export interface RawAnswer {
  /** 0: no answer (see `error`) */
  status: number;
  /** how long the request waited for a connection: a free one, or a new one's handshake (NaN: it never had one) */
  connectMs: number;
  /** whether it opened a new connection */
  fresh: boolean;
  /** the answer's body, when `bodyOf` asked for it ('' otherwise); a chunked one as sent, its chunk sizes in it */
  body: string;
  /** why there was no answer: a socket error's code, CLIENT_TIMEOUT, or CLOSED */
  error?: string;
}

export interface RawPool {
  /** POSTs `body` to `path` with `head` (header lines, each ending in CRLF, without Host and Content-Length). */
  post(path: string, head: string, body: string): Promise<RawAnswer>;
  /** requests that got no answer, by reason */
  failures: Record<string, number>;
  /** connections opened so far */
  opened(): number;
  close(): void;
}

interface Request {
  text: string;
  postedAt: number;
  writtenAt: number;
  connectMs: number;
  fresh: boolean;
  resolve: (a: RawAnswer) => void;
}

interface Conn {
  socket: net.Socket;
  buf: Buffer;
  current: Request | null;
  /** closed by the client's timeout */
  timedOut: boolean;
}

const HEADER_END = Buffer.from('\r\n\r\n');
const LAST_CHUNK = Buffer.from('0\r\n\r\n');

/** Header lines from an object: `name: value\r\n` each. */
export function headLines(headers: Record<string, string>): string {
  return Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
}

export function rawPool(url: URL, opts: { maxSockets: number; timeoutMs: number; bodyOf?: (status: number) => boolean }): RawPool {
  const host = url.hostname;
  const port = Number(url.port);
  const hostLine = `Host: ${url.host}\r\n`;
  const free: Conn[] = [];
  const busy = new Set<Conn>();
  const waiting: Request[] = [];
  const failures: Record<string, number> = {};
  let open = 0;
  let opened = 0;
  let closed = false;

  function answer(r: Request, a: Omit<RawAnswer, 'connectMs' | 'fresh'>): void {
    if (a.error) failures[a.error] = (failures[a.error] ?? 0) + 1;
    r.resolve({ ...a, connectMs: r.connectMs, fresh: r.fresh });
  }

  function write(conn: Conn, r: Request): void {
    conn.current = r;
    busy.add(conn);
    r.writtenAt = performance.now();
    conn.socket.write(r.text);
  }

  /** A connection whose answer is read: the next waiting request, or the free list. */
  function release(conn: Conn): void {
    busy.delete(conn);
    const next = waiting.shift();
    if (next) {
      next.connectMs = performance.now() - next.postedAt;
      write(conn, next);
    } else free.push(conn);
  }

  function connect(r: Request): void {
    open += 1;
    opened += 1;
    const socket = net.connect({ host, port });
    socket.setNoDelay(true);
    const conn: Conn = { socket, buf: Buffer.alloc(0), current: null, timedOut: false };
    r.fresh = true;
    socket.once('connect', () => (r.connectMs = performance.now() - r.postedAt));
    socket.on('data', (chunk: Buffer) => read(conn, chunk));
    let error = 'CLOSED';
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? 'ERROR'));
    socket.on('close', () => {
      open -= 1;
      busy.delete(conn);
      const at = free.indexOf(conn);
      if (at >= 0) free.splice(at, 1);
      if (conn.current) answer(conn.current, { status: 0, body: '', error: conn.timedOut ? 'CLIENT_TIMEOUT' : error });
      conn.current = null;
      // a request waiting for a connection takes the place of this one
      const next = !closed && waiting.length > 0 && open < opts.maxSockets ? waiting.shift() : undefined;
      if (next) connect(next);
    });
    write(conn, r);
  }

  /** Reads an answer off `conn` once it is whole: status, length (or chunks), body when asked. */
  function read(conn: Conn, chunk: Buffer): void {
    conn.buf = conn.buf.length === 0 ? chunk : Buffer.concat([conn.buf, chunk]);
    const r = conn.current;
    if (!r) return;
    const end = conn.buf.indexOf(HEADER_END);
    if (end < 0) return;
    const head = conn.buf.toString('latin1', 0, end).toLowerCase();
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length:\s*(\d+)/.exec(head);
    let bodyEnd: number;
    if (length) {
      bodyEnd = end + 4 + Number(length[1]);
      if (conn.buf.length < bodyEnd) return;
    } else if (/\r\ntransfer-encoding:\s*chunked/.test(head)) {
      const last = conn.buf.indexOf(LAST_CHUNK, end + 4);
      if (last < 0) return;
      bodyEnd = last + LAST_CHUNK.length;
    } else return; // the body ends with the connection: answered on close
    const body = opts.bodyOf?.(status) ? conn.buf.toString('utf8', end + 4, bodyEnd) : '';
    conn.buf = conn.buf.subarray(bodyEnd);
    conn.current = null;
    answer(r, { status, body });
    if (/\r\nconnection:\s*close/.test(head)) conn.socket.destroy();
    else release(conn);
  }

  const timer = setInterval(() => {
    const now = performance.now();
    for (const conn of busy) {
      if (conn.current && now - conn.current.writtenAt > opts.timeoutMs) {
        conn.timedOut = true;
        conn.socket.destroy();
      }
    }
  }, 250);

  return {
    post(path: string, head: string, body: string): Promise<RawAnswer> {
      return new Promise((resolve) => {
        const text = `POST ${path} HTTP/1.1\r\n${hostLine}${head}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
        const r: Request = { text, postedAt: performance.now(), writtenAt: 0, connectMs: NaN, fresh: false, resolve };
        // a connection leaves the free list when it closes (its 'close' handler in `connect`)
        const conn = free.pop();
        if (conn) {
          r.connectMs = 0;
          write(conn, r);
        } else if (open < opts.maxSockets) connect(r);
        else waiting.push(r);
      });
    },
    failures,
    opened: () => opened,
    close(): void {
      closed = true;
      clearInterval(timer);
      for (const conn of [...free, ...busy]) conn.socket.destroy();
    },
  };
}
