import { EnvHttpProxyAgent } from 'undici';

/**
 * Whether the environment names an outbound proxy, as curl reads it
 * (`HTTPS_PROXY`, `HTTP_PROXY`, either case; `NO_PROXY` for hosts reached
 * directly). undici's pools and agents, which the gateway reaches its
 * upstreams through, read none of them by themselves.
 */
export function outboundProxyConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.https_proxy || env.HTTPS_PROXY || env.http_proxy || env.HTTP_PROXY);
}

/** A dispatcher that goes through the environment's proxy (per request, honouring `NO_PROXY`), with the connection settings a direct one would have. */
export function proxiedDispatcher(options: ConstructorParameters<typeof EnvHttpProxyAgent>[0]): EnvHttpProxyAgent {
  return new EnvHttpProxyAgent(options);
}
