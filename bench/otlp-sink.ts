import { createServer } from 'node:http';

/**
 * A local OTLP/HTTP collector for benchmarks: takes JSON trace exports on
 * `POST /v1/traces`, counts their spans and answers as a collector does;
 * `GET /stats` says how many arrived. Prints its port on stdout.
 */
let spans = 0;
let exports = 0;

const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (piece: string) => (body += piece));
  req.on('end', () => {
    if (req.method === 'GET' && req.url === '/stats') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ spans, exports }));
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    exports++;
    for (const resource of JSON.parse(body).resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) spans += scope.spans?.length ?? 0;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"partialSuccess":{}}');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
