// The benchmarks' baseline: a bare Node HTTP server that reads the body and answers 202, or with `refuse`, answers
// every request at once with a 429 as Lookout's admission gate does (before the body; Node discards it).
import http from 'node:http';

const port = Number(process.argv[2]);
const refuse = process.argv[3] === 'refuse';
const REFUSAL = '{"reason":"rate_limited","message":"over capacity; retry after 1 s","retry_after":1}';
const server = http.createServer((req, res) => {
  if (refuse) {
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1', 'content-length': Buffer.byteLength(REFUSAL) });
    res.end(REFUSAL);
    return;
  }
  req.resume();
  req.on('end', () => {
    res.writeHead(202, { 'content-type': 'application/json' });
    res.end('{"accepted":1}');
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
