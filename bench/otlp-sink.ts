import { createServer } from 'node:http';

/**
 * A local OTLP/HTTP collector for benchmarks: takes trace exports on
 * `POST /v1/traces` (protobuf or JSON), counts their spans and answers as a
 * collector does; `GET /stats` says how many arrived. Prints its port on
 * stdout.
 */
let spans = 0;
let exports = 0;
let bytes = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (piece: Buffer) => chunks.push(piece));
  req.on('end', () => {
    if (req.method === 'GET' && req.url === '/stats') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ spans, exports, bytes }));
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/traces') {
      res.writeHead(404).end();
      return;
    }
    const body = Buffer.concat(chunks);
    exports++;
    bytes += body.length;
    if (req.headers['content-type'] === 'application/x-protobuf') {
      // ExportTraceServiceRequest.resource_spans (1) → ResourceSpans.scope_spans (2) → ScopeSpans.spans (2).
      for (const resource of fieldsOf(body, 1)) for (const scope of fieldsOf(resource, 2)) spans += fieldsOf(scope, 2).length;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' });
      res.end();
      return;
    }
    for (const resource of JSON.parse(body.toString('utf8')).resourceSpans ?? []) for (const scope of resource.scopeSpans ?? []) spans += scope.spans?.length ?? 0;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"partialSuccess":{}}');
  });
});

/** The length-delimited values of one field of a protobuf message; other fields are skipped. */
function fieldsOf(buffer: Buffer, wanted: number): Buffer[] {
  const found: Buffer[] = [];
  let offset = 0;
  const varint = (): number => {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const byte = buffer[offset++]!;
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
    }
  };
  while (offset < buffer.length) {
    const tag = varint();
    const wire = tag & 7;
    if (wire === 0) varint();
    else if (wire === 1) offset += 8;
    else if (wire === 5) offset += 4;
    else if (wire === 2) {
      const length = varint();
      if (tag >>> 3 === wanted) found.push(buffer.subarray(offset, offset + length));
      offset += length;
    } else throw new Error(`unexpected wire type ${wire}`);
  }
  return found;
}

server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
