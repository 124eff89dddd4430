import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.ts';
import { traceContextOf } from '../../util/trace-context.ts';
import { WRITES_OWN_LOG_LINE } from '../routes/responses-route.ts';
import { ResponsesSocketSession, type SocketSessionOptions } from './responses-socket-session.ts';

export interface ResponsesSocketOptions extends SocketSessionOptions {
  /** Largest client frame, in bytes (a larger one closes the connection with 1009). */
  maxFrameBytes: number;
}

/** The WebSocket connections open now, so a shutdown can drain them. */
export interface OpenSockets {
  readonly size: number;
  /** Each connection stops taking new responses and closes once its running one has ended. */
  drain(): void;
  /** Ends every connection still open. */
  terminate(): void;
}

/**
 * The WebSocket transport on `/v1/responses` (OpenResponses 2026-04-24):
 * the upgrade goes through the same hooks as every request — API key,
 * drain — so a refused upgrade is an HTTP error before any protocol switch.
 * Register before every other route (the plugin must see the upgrades first).
 */
export async function registerResponsesSocket(app: FastifyInstance, options: ResponsesSocketOptions): Promise<OpenSockets> {
  const sessions = new Set<ResponsesSocketSession>();
  const open: OpenSockets = {
    get size() {
      return sessions.size;
    },
    drain: () => sessions.forEach((session) => session.drain()),
    terminate: () => sessions.forEach((session) => session.terminate()),
  };
  await app.register(websocket, {
    options: { maxPayload: options.maxFrameBytes, perMessageDeflate: false },
    // Connections are drained with the HTTP requests (build-app.ts), not cut when closing begins.
    preClose: async () => {
      open.drain();
    },
    // A peer that vanishes mid-frame is not the gateway's failure: said at info (the session logs it), then the socket goes.
    errorHandler: (_error, socket) => {
      socket.terminate();
    },
  });
  app.route({
    method: 'GET',
    url: '/v1/responses',
    config: WRITES_OWN_LOG_LINE,
    handler: async () => {
      throw new GatewayError({
        status: 426,
        type: 'invalid_request_error',
        code: 'upgrade_required',
        message: 'GET /v1/responses is the WebSocket transport: connect with "Upgrade: websocket". Create a response over HTTP with POST /v1/responses.',
        headers: { upgrade: 'websocket' },
      });
    },
    wsHandler: (socket, request) => {
      const session = new ResponsesSocketSession(socket, { tenant: request.tenant, apiKeyId: request.apiKeyId, log: request.log, trace: options.tracing ? traceContextOf(request.headers) : null }, options);
      sessions.add(session);
      request.log.debug('websocket opened');
      void session.finished.then(() => sessions.delete(session));
    },
  });
  return open;
}
