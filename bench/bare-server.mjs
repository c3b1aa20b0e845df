// The benchmarks' baseline: a bare Node HTTP server that reads the body and answers 202.
import http from 'node:http';

const port = Number(process.argv[2]);
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(202, { 'content-type': 'application/json' });
    res.end('{"accepted":1}');
  });
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => console.log(`listening on ${port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
