import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors/gateway-error.ts';

export interface GracefulDrainOptions {
  /** How long responses in flight may run on once shutdown begins. */
  graceMs: number;
  /** Ends every response still running (each with its terminal event, stored). */
  stopResponses(): void;
  /** Cuts connections Node's HTTP server no longer tracks (upgraded WebSockets), with the rest. */
  cutUpgradedConnections?(): void;
  /** Told the moment shutdown begins. */
  onDrainStart?(): void;
}

export interface DrainState {
  /** True from the moment shutdown begins. */
  readonly draining: boolean;
}

/**
 * After the responses still running were told to stop, this long is left for
 * them to store their final state and write their terminal event before the
 * remaining connections are cut.
 */
const FINISH_MS = 5_000;

/** How often connections that went idle during the drain are closed. */
const IDLE_SWEEP_MS = 100;

/** Probes keep answering while draining: liveness stays up, readiness says why it is down. */
const PROBES = new Set(['/healthz', '/readyz']);

/**
 * Shutdown without losing work: `app.close()` (on SIGTERM/SIGINT) stops
 * listening at once — new connections are refused, requests on kept-alive
 * ones get a 503 in the error envelope — and waits for the requests in
 * flight. Those get `graceMs` to finish by themselves; then each still
 * running is ended as `incomplete` (reason `server_shutdown`), and whatever
 * connection is left after that is cut. Register before the routes.
 */
export function registerGracefulDrain(app: FastifyInstance, options: GracefulDrainOptions): DrainState {
  const state = { draining: false };
  const timers: NodeJS.Timeout[] = [];

  app.addHook('onRequest', (request, reply, done) => {
    if (!state.draining || PROBES.has(request.url.split('?')[0]!)) return done();
    reply.header('connection', 'close').header('retry-after', '1');
    done(new GatewayError({ status: 503, type: 'server_error', code: 'server_shutting_down', message: 'This gateway instance is shutting down; retry the request.' }));
  });

  app.addHook('preClose', async () => {
    state.draining = true;
    options.onDrainStart?.();
    // Node closes the connections idle at close time, not those that become idle later (a finished
    // stream on a kept-alive connection): without this, close would wait out every keep-alive timeout.
    timers.push(setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS).unref());
    const graceEnded = setTimeout(() => {
      app.log.warn({ grace_ms: options.graceMs }, 'shutdown grace over: ending the responses still running');
      options.stopResponses();
      timers.push(
        setTimeout(() => {
          app.server.closeAllConnections();
          options.cutUpgradedConnections?.();
        }, FINISH_MS).unref(),
      );
    }, options.graceMs);
    timers.push(graceEnded.unref());
  });
  app.addHook('onClose', async () => {
    for (const timer of timers) clearTimeout(timer);
  });
  return state;
}
