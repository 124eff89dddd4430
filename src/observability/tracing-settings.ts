import type { GatewayConfig } from '../config/load-config.ts';

/** Where OTLP/HTTP collectors listen for traces unless told otherwise. */
export const DEFAULT_OTLP_TRACES_URL = 'http://localhost:4318/v1/traces';

/** Whether the configuration turns traces on: explicitly, or by naming an endpoint. */
export function tracingEnabled(config: GatewayConfig['tracing']): boolean {
  return config.enabled ?? config.endpoint !== null;
}
