import type { FastifyInstance } from 'fastify';

export interface GracefulDrainOptions {
  /** How long responses in flight may run on once shutdown begins. */
  graceMs: number;
  /** Ends every response still running (each with its terminal event, stored). */
  stopResponses(): void;
  /** Called the moment shutdown begins (readiness turns 503). */
  onDraining(): void;
}

/**
 * After the responses still running were told to stop, this long is left for
 * them to store their final state and write their terminal event before the
 * remaining connections are cut.
 */
const FINISH_MS = 5_000;

/** How often connections that went idle during the drain are closed. */
const IDLE_SWEEP_MS = 100;

/**
 * Shutdown without losing work: `app.close()` (on SIGTERM/SIGINT) stops
 * listening at once — new connections are refused, requests on kept-alive
 * ones get 503 — and waits for the requests in flight. Those get `graceMs` to
 * finish by themselves; then each still running is ended as `incomplete`
 * (reason `server_shutdown`), and whatever connection is left after that is
 * cut.
 */
export function registerGracefulDrain(app: FastifyInstance, options: GracefulDrainOptions): void {
  const timers: NodeJS.Timeout[] = [];
  app.addHook('preClose', async () => {
    options.onDraining();
    // Node closes the connections idle at close time, not those that become idle later (a finished
    // stream on a kept-alive connection): without this, close would wait out every keep-alive timeout.
    timers.push(setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS).unref());
    const graceEnded = setTimeout(() => {
      app.log.warn({ grace_ms: options.graceMs }, 'shutdown grace over: ending the responses still running');
      options.stopResponses();
      timers.push(setTimeout(() => app.server.closeAllConnections(), FINISH_MS).unref());
    }, options.graceMs);
    timers.push(graceEnded.unref());
  });
  app.addHook('onClose', async () => {
    for (const timer of timers) clearTimeout(timer);
  });
}
