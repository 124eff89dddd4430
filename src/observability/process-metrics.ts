import { collectDefaultMetrics, Registry } from 'prom-client';

let registry: Registry | null = null;

/**
 * The process's own metrics (CPU, memory, event loop lag, GC, handles), in a
 * registry of their own made on first use: they describe the process, not one
 * app, and their collectors (an event-loop monitor, a GC observer) must not be
 * started again for every app a process builds.
 */
export function processMetrics(): Registry {
  if (registry) return registry;
  registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}
