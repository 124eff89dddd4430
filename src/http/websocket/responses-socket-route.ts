import websocket from '@fastify/websocket';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../errors/gateway-error.ts';
import { originNotAllowed, type BrowserOrigins } from '../browser-origins.ts';
import type { PageGuard } from '../page-guard.ts';
import { traceContextOf } from '../../util/trace-context.ts';
import { WRITES_OWN_LOG_LINE } from '../routes/responses-route.ts';
import { ResponsesSocketSession, type SocketSessionOptions } from './responses-socket-session.ts';
import { chooseProtocol } from './socket-protocol-key.ts';

export interface ResponsesSocketOptions extends SocketSessionOptions {
  /** Largest client frame, in bytes (a larger one closes the connection with 1009). */
  maxFrameBytes: number;
  /** Browser origins allowed to connect (`server.corsOrigins`); null: none but the gateway's own. */
  browsers: BrowserOrigins | null;
  /** Without API keys, what tells browser pages apart (page-guard.ts); null with keys. */
  pageGuard: PageGuard | null;
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
    options: { maxPayload: options.maxFrameBytes, perMessageDeflate: false, handleProtocols: chooseProtocol },
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
    // Browsers apply no CORS to WebSockets: without this, any page a user opens could run responses on the gateway.
    preValidation: async (request) => refuseForeignOrigin(request.headers, options),
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

/**
 * A browser says where the page that opens a WebSocket comes from (`Origin`)
 * and lets it connect to any host: the server must check. Allowed are the
 * configured browser origins (`server.corsOrigins`) and the gateway's own
 * origin; clients that are not browsers (SDKs, agents, Codex) send no
 * `Origin` and are not affected. Refused with 403 before the protocol switch.
 */
function refuseForeignOrigin(headers: IncomingHttpHeaders, { browsers, pageGuard }: Pick<ResponsesSocketOptions, 'browsers' | 'pageGuard'>): void {
  if (pageGuard) {
    const refusal = pageGuard.refusal(headers);
    if (refusal) throw refusal;
    return;
  }
  const origin = headers.origin;
  if (origin === undefined || (browsers ? browsers.admits(origin, headers.host) : hostOf(origin) === headers.host)) return;
  throw originNotAllowed(origin);
}

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}
