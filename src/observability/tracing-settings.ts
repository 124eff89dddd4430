import type { GatewayConfig } from '../config/load-config.ts';

/** Where OTLP/HTTP collectors listen for traces unless told otherwise. */
export const DEFAULT_OTLP_TRACES_URL = 'http://localhost:4318/v1/traces';

/** Whether the configuration turns traces on: explicitly, or by naming an endpoint. */
export function tracingEnabled(config: GatewayConfig['tracing']): boolean {
  return config.enabled ?? config.endpoint !== null;
}

/**
 * The header values OpenTelemetry's own variables give the trace exporter
 * (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TRACES_HEADERS`: `name=value`
 * pairs, comma-separated, values percent-encoded), which the exporter reads
 * from the environment itself: secrets as `tracing.headers`' are (a collector's
 * refusal may quote them), though they are in no configuration.
 */
export function exporterHeaderSecrets(env: NodeJS.ProcessEnv = process.env): string[] {
  const values: string[] = [];
  for (const name of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS']) {
    for (const pair of (env[name] ?? '').split(',')) {
      const separator = pair.indexOf('=');
      if (separator < 0) continue;
      const raw = pair.slice(separator + 1).trim();
      let value = raw;
      try {
        value = decodeURIComponent(raw);
      } catch {
        // Not percent-encoded after all: as written.
      }
      values.push(value, raw, ...value.split(/\s+/).slice(1));
    }
  }
  return values.filter((value) => value !== '');
}
