import type { OperatorServerStatus } from '../executors/mcp/operator-tool-catalog.ts';
import type { Provider } from '../providers/provider.ts';
import type { ResponseStore, StoreHealth } from '../store/response-store.ts';

/** What `/readyz` answers: ready or not (and why), and the state of each dependency. */
export interface Readiness {
  ready: boolean;
  reason?: string;
  dependencies: {
    /** `reason` when unavailable: see `StoreHealth`. */
    store: { kind: ResponseStore['kind'] } & StoreHealth;
    /** `type`: the provider's kind from the configuration (null for providers built elsewhere). */
    providers: { name: string; type: string | null; state: 'configured' }[];
    mcp_servers: OperatorServerStatus[];
  };
}

export interface ReadinessSources {
  draining(): boolean;
  providers: ReadonlyMap<string, Provider>;
  /** Each configured provider's `type`, by name. */
  providerTypes: Readonly<Record<string, { type: string }>>;
  store: ResponseStore;
  mcpServers(): OperatorServerStatus[];
}

/**
 * Ready means this replica can serve a request end to end: not draining, a
 * provider to send it to, a store to keep it in. MCP servers are reported but
 * never make it unready: their tools are left out of requests while they are
 * away, and the rest keeps working. Providers are not called (a readiness
 * probe must not spend upstream quota); their failures show as 502s.
 */
export function readiness(sources: ReadinessSources): Readiness {
  const storeHealth = sources.store.health();
  const storeReady = storeHealth.state === 'ready';
  const dependencies: Readiness['dependencies'] = {
    store: { kind: sources.store.kind, ...storeHealth },
    providers: [...sources.providers.keys()].map((name) => ({ name, type: sources.providerTypes[name]?.type ?? null, state: 'configured' })),
    mcp_servers: sources.mcpServers(),
  };
  if (sources.draining()) return { ready: false, reason: 'shutting down', dependencies };
  if (sources.providers.size === 0) return { ready: false, reason: 'no provider configured', dependencies };
  if (!storeReady) return { ready: false, reason: 'response store unavailable', dependencies };
  return { ready: true, dependencies };
}
