import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { ErrorBody } from '../errors/gateway-error.ts';
import { newId } from '../util/ids.ts';
import type { BrowserOrigins } from './browser-origins.ts';

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refuses
 * (headers over its limit, a request that is not HTTP, one that timed out
 * arriving) never reaches Fastify's routes or error handler, so it is
 * answered here on the socket, in the error envelope rather than Fastify's
 * own shape, and the connection closed, as Node does.
 */
export function clientErrorReplier(browsers: BrowserOrigins | null): (this: { log: FastifyBaseLogger }, error: NodeJS.ErrnoException, socket: Socket) => void {
  return function replyToClientError(error, socket) {
    // A reset connection is gone: nothing to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const { status, code, message } = describe(error);
    const requestId = newId('req');
    this.log.debug({ err: error, status, request_id: requestId }, 'client error');
    // A response already under way (one that answered before reading the whole body) is not interrupted by a second one.
    if (socket.writable && !responseUnderWay(socket)) {
      const body = JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code } } satisfies ErrorBody);
      const headers = [
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Connection: close',
        `x-request-id: ${requestId}`,
        ...(status === 408 ? [] : ['x-should-retry: false']),
        ...corsHeaders(browsers, error),
      ];
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${headers.join('\r\n')}\r\n\r\n${body}`);
    }
    socket.destroy(error);
  };
}

/**
 * What lets a page read the refusal, as every other answer does: the
 * request was never parsed, so its `Origin` is looked for in the bytes that
 * arrived (all of them, for headers over the limit).
 */
function corsHeaders(browsers: BrowserOrigins | null, error: NodeJS.ErrnoException): string[] {
  if (!browsers) return [];
  const raw = (error as { rawPacket?: unknown }).rawPacket;
  const origin = Buffer.isBuffer(raw) ? /\r\norigin:[ \t]*([^\r\n]*)/i.exec(raw.toString('latin1'))?.[1]?.trim() : undefined;
  const allowed = browsers.allowed === '*' ? '*' : origin !== undefined && browsers.allows(origin) ? origin : null;
  return allowed === null ? ['Vary: Origin'] : ['Vary: Origin', `Access-Control-Allow-Origin: ${allowed}`, `Access-Control-Expose-Headers: ${browsers.exposedHeaders}`];
}

function describe(error: NodeJS.ErrnoException): { status: number; code: string; message: string } {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'request_headers_too_large', message: "The request's headers are larger than this gateway accepts (Node's --max-http-header-size, 16 KiB by default)." };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: 'request_timeout', message: 'The request did not arrive in time.' };
    default:
      return { status: 400, code: 'malformed_request', message: `The request is not valid HTTP/1.1${error.code ? ` (${error.code})` : ''}.` };
  }
}

function responseUnderWay(socket: Socket): boolean {
  // Node's own default handler checks the same: the response the socket is writing, if any.
  const outgoing = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  return outgoing?.headersSent === true;
}
