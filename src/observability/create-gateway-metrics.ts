import type { GatewayConfig } from '../config/load-config.ts';
import { GatewayMetrics } from './gateway-metrics.ts';
import { LabelBounds } from './label-bounds.ts';

/** The metrics of a gateway built from `config` (null when `metrics.enabled` is off), its labels bounded by what the configuration names. */
export function createGatewayMetrics(config: GatewayConfig, providerNames: Iterable<string>, defaultTenant: string): GatewayMetrics | null {
  if (!config.metrics.enabled) return null;
  return new GatewayMetrics(
    new LabelBounds({
      models: [...Object.keys(config.models), ...(config.defaultModel ? [config.defaultModel] : [])],
      providers: providerNames,
      tenants: config.auth.apiKeys.length > 0 ? config.auth.apiKeys.map((entry) => entry.tenant) : [defaultTenant],
      mcpServers: config.mcp.servers.map((server) => server.name),
    }),
  );
}
