import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { GatewayMetrics } from '../observability/gateway-metrics.ts';
import type { MetricsAccess } from './metrics-access.ts';

export interface MetricsListenerOptions {
  host: string;
  port: number;
  path: string;
  access: MetricsAccess;
}

/**
 * `/metrics` on a port of its own (`metrics.port`), meant for an internal
 * network: a bare HTTP server with one route, so scrapes never queue behind
 * client traffic and the main port need not expose them. Anything else gets
 * the gateway's error envelope.
 */
export class MetricsListener {
  readonly #metrics: GatewayMetrics;
  readonly #options: MetricsListenerOptions;
  readonly #server: Server;

  constructor(metrics: GatewayMetrics, options: MetricsListenerOptions) {
    this.#metrics = metrics;
    this.#options = options;
    this.#server = createServer((request, response) => void this.#serve(request, response));
  }

  /** Starts listening; rejects when the port cannot be had (the gateway then does not start). */
  listen(): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.#options.port, this.#options.host, () => {
        this.#server.off('error', reject);
        resolve(this.#server.address() as AddressInfo);
      });
    });
  }

  async close(): Promise<void> {
    if (!this.#server.listening) return;
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '/').split('?')[0];
    if (path !== this.#options.path) return sendError(response, 404, { type: 'invalid_request_error', code: 'not_found', message: `Only ${this.#options.path} is served on this port.` });
    if (request.method !== 'GET' && request.method !== 'HEAD') return sendError(response, 405, { type: 'invalid_request_error', code: 'method_not_allowed', message: `${this.#options.path} answers GET only.` }, { allow: 'GET, HEAD' });
    const refusal = this.#options.access(request.headers.authorization);
    if (refusal) return sendError(response, refusal.status, refusal);
    try {
      const { contentType, body } = await this.#metrics.exposition();
      response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : body);
    } catch {
      sendError(response, 500, { type: 'server_error', code: 'internal_error', message: 'The metrics could not be collected.' });
    }
  }
}

function sendError(response: ServerResponse, status: number, error: Pick<GatewayError, 'type' | 'code' | 'message'>, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  response.end(JSON.stringify({ error: { message: error.message, type: error.type, param: null, code: error.code } }));
}
