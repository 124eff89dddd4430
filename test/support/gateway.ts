import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { GatewayConfig } from '../../src/config/load-config.ts';
import { buildApp } from '../../src/http/build-app.ts';
import type { ToolExecutor } from '../../src/executors/tool-executor.ts';

export interface RunningGateway {
  app: FastifyInstance;
  /** Base URL ending in /v1, as SDK clients take it. */
  baseURL: string;
  origin: string;
  close(): Promise<void>;
}

/** Starts the real gateway on a free loopback port, pointed at `upstreamBaseUrl`. */
export async function startGateway(
  upstreamBaseUrl: string,
  overrides: Partial<Record<string, unknown>> = {},
  providerOverrides: Record<string, unknown> = {},
  executors: ToolExecutor[] = [],
  logStream?: { write(line: string): void },
): Promise<RunningGateway> {
  const config = GatewayConfig.parse({
    logLevel: 'silent',
    providers: { openai: { type: 'openai-chat', baseUrl: upstreamBaseUrl, apiKey: 'sk-upstream-test', ...providerOverrides } },
    ...overrides,
    // Tests send their first request right after start; on a loaded machine the first listing can take longer than the production bound.
    mcp: { listWaitMs: 5_000, ...(overrides.mcp as object | undefined) },
    server: { host: '127.0.0.1', port: 0, shutdownGraceMs: 200, ...(overrides.server as object | undefined) },
  });
  const app = await buildApp({ config, executors, ...(logStream && { logStream }) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { app, origin, baseURL: `${origin}/v1`, close: () => app.close() };
}
