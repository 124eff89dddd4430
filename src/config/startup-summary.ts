import type { AddressInfo } from 'node:net';
import type { GatewayConfig } from './load-config.ts';
import { maskUrl } from './mask-secrets.ts';
import { DEFAULT_OTLP_TRACES_URL, tracingEnabled } from '../observability/tracing-settings.ts';
import { effectiveDefaultProvider } from './default-provider.ts';

/** The fields of the one start-up log line: what an operator needs to know this process is the one they meant. */
export interface StartupSummary {
  version: string;
  listening: string | null;
  providers: { name: string; type: string; base_url: string }[];
  default_provider: string | null;
  default_model: string | null;
  store:
    | { kind: 'memory'; max_entries: number; max_bytes: number; ttl_seconds: number }
    | { kind: 'redis'; url: string; key_prefix: string; ttl_seconds: number }
    | { kind: 'redis-cluster'; nodes: string[]; key_prefix: string; ttl_seconds: number };
  mcp_servers: { name: string; origin: string }[];
  auth: { enabled: boolean; keys: number; tenants: number };
  /** Whether compaction items are sealed under the configured key or one generated at start (never the key). */
  compaction: { key: 'configured' | 'generated' };
  limits: { max_turns: number; deadline_ms: number; tool_timeout_ms: number; body_limit_bytes: number; request_timeout_ms: number; shutdown_grace_ms: number };
  /** Where /metrics is served (`port` null: the main port) and whether a token guards it (never the token). */
  metrics: { enabled: false } | { enabled: true; path: string; port: number | null; token: boolean };
  /** Where traces go, when they are on. */
  tracing: { enabled: false } | { enabled: true; endpoint: string; capture_content: boolean };
}

/** Builds the start-up line's fields; never includes a key, a header or a URL's password. */
export function describeStartup(config: GatewayConfig, runtime: { version: string; address: AddressInfo | string | null }): StartupSummary {
  const { store, auth, loop, server } = config;
  return {
    version: runtime.version,
    listening: listeningAt(runtime.address),
    providers: Object.entries(config.providers).map(([name, provider]) => ({ name, type: provider.type, base_url: maskUrl(provider.baseUrl) })),
    default_provider: effectiveDefaultProvider(config.defaultProvider, config.providers),
    default_model: config.defaultModel,
    store: describeStore(store),
    mcp_servers: config.mcp.servers.map((mcpServer) => ({ name: mcpServer.name, origin: new URL(mcpServer.url).origin })),
    auth: { enabled: auth.apiKeys.length > 0, keys: auth.apiKeys.length, tenants: new Set(auth.apiKeys.map((entry) => entry.tenant)).size },
    compaction: { key: config.compaction.key === null ? 'generated' : 'configured' },
    limits: {
      max_turns: loop.maxTurns,
      deadline_ms: loop.deadlineMs,
      tool_timeout_ms: loop.toolTimeoutMs,
      body_limit_bytes: server.bodyLimitBytes,
      request_timeout_ms: server.requestTimeoutMs,
      shutdown_grace_ms: server.shutdownGraceMs,
    },
    metrics: config.metrics.enabled ? { enabled: true, path: config.metrics.path, port: config.metrics.port, token: config.metrics.token !== null } : { enabled: false },
    tracing: tracingEnabled(config.tracing) ? { enabled: true, endpoint: maskUrl(config.tracing.endpoint ?? DEFAULT_OTLP_TRACES_URL), capture_content: config.tracing.captureContent } : { enabled: false },
  };
}

/** As create-store.ts chooses: the cluster when nodes are configured, else a single Redis, else memory. */
function describeStore(store: GatewayConfig['store']): StartupSummary['store'] {
  if (store.clusterNodes.length > 0) return { kind: 'redis-cluster', nodes: store.clusterNodes.map(maskUrl), key_prefix: store.keyPrefix, ttl_seconds: store.ttlSeconds };
  if (store.redisUrl) return { kind: 'redis', url: maskUrl(store.redisUrl), key_prefix: store.keyPrefix, ttl_seconds: store.ttlSeconds };
  return { kind: 'memory', max_entries: store.maxEntries, max_bytes: store.maxBytes, ttl_seconds: store.ttlSeconds };
}

function listeningAt(address: AddressInfo | string | null): string | null {
  if (address === null || typeof address === 'string') return address;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
