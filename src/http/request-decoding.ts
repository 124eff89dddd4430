import { PassThrough, type Readable, type Transform } from 'node:stream';
import { createBrotliDecompress, createUnzip, createZstdDecompress } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors/gateway-error.ts';

/** The content codings a request body may arrive in; `createUnzip` reads gzip and zlib-wrapped deflate alike, so a mislabelled one still opens. */
const DECODERS: Readonly<Record<string, () => Transform>> = {
  gzip: createUnzip,
  'x-gzip': createUnzip,
  deflate: createUnzip,
  br: createBrotliDecompress,
  zstd: createZstdDecompress,
};
const ACCEPTED = 'gzip, deflate, br, zstd';

/**
 * Request bodies sent compressed (`Content-Encoding: gzip`, `deflate`, `br`
 * or `zstd`; Codex compresses its requests with zstd when signed in with a
 * ChatGPT account) are read decompressed, under the same body limit counted
 * after decompression, so a small bomb is a 413 like any large body. A coding the gateway cannot read is a 415 that says
 * which it can (RFC 7694's `Accept-Encoding` on the answer), and a body that
 * is not what its coding says is a 400 saying so: neither is reported as
 * JSON it could not parse.
 */
export function registerRequestDecoding(app: FastifyInstance): void {
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const coding = request.headers['content-encoding']?.trim().toLowerCase();
    if (coding === undefined || coding === '' || coding === 'identity') return done(null, payload);
    const decoder = DECODERS[coding];
    if (!decoder) return done(unsupportedCoding(request.headers['content-encoding']!));
    done(null, decoded(payload, decoder(), coding));
  });
}

/** The body as its decoder reads it. Fastify checks `Content-Length` against `receivedEncodedLength`, the bytes that came over the wire. */
function decoded(payload: Readable, decoder: Transform, coding: string): Readable {
  const body = Object.assign(new PassThrough(), { receivedEncodedLength: 0 });
  payload.on('data', (chunk: Buffer) => {
    body.receivedEncodedLength += chunk.length;
  });
  // Errors do not travel along pipes: each stage's becomes the body's, a decoder's as the client's mistake.
  payload.on('error', (error) => body.destroy(error));
  decoder.on('error', (error) => body.destroy(undecodable(coding, error)));
  // The body's error is its reader's to answer (the JSON parser's 400). A route that reads no body (a probe, a GET, a
  // POST refused for its content type first) leaves it unheard, and an unheard stream error would end the process.
  body.on('error', () => {});
  payload.pipe(decoder).pipe(body);
  return body;
}

function unsupportedCoding(coding: string): GatewayError {
  return new GatewayError({
    status: 415,
    type: 'invalid_request_error',
    code: 'unsupported_content_encoding',
    message: `Content-Encoding '${coding}' is not supported: send the body uncompressed or as ${ACCEPTED}.`,
    headers: { 'accept-encoding': ACCEPTED },
  });
}

function undecodable(coding: string, cause: Error): GatewayError {
  return new GatewayError({
    status: 400,
    type: 'invalid_request_error',
    code: 'invalid_content_encoding',
    message: `The request body is not valid ${coding} data (Content-Encoding: ${coding}): ${cause.message}.`,
    cause,
  });
}
