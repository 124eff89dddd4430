import cors from '@fastify/cors';
import Fastify, { type FastifyInstance } from 'fastify';
import { decodeCompactionKey } from '../config/compaction-key.ts';
import { effectiveDefaultProvider } from '../config/default-provider.ts';
import { configuredSecrets } from '../config/configured-secrets.ts';
import { exporterHeaderSecrets } from '../observability/tracing-settings.ts';
import type { GatewayConfig } from '../config/load-config.ts';
import { CompactionCodec } from '../engine/compaction/compaction-codec.ts';
import { Compactor } from '../engine/compaction/compactor.ts';
import { ContextWindows } from '../engine/context-windows.ts';
import { InputTokenCounter } from '../engine/count-input-tokens.ts';
import { ApprovalAnswers } from '../engine/approval-answers.ts';
import { ResponseEngine } from '../engine/response-engine.ts';
import type { ObservedResponse } from '../engine/loop-observer.ts';
import { estimateTurnTokens, loadTokenCounter } from '../engine/token-estimate.ts';
import { measuresTokensUpFront } from '../config/measures-tokens.ts';
import { UsageRecorder } from '../engine/usage-recorder.ts';
import { createProviders } from '../providers/create-providers.ts';
import { ModelRouter } from '../providers/model-router.ts';
import { MemoryDeploymentHealth } from '../providers/routing/deployment-health.ts';
import type { Provider } from '../providers/provider.ts';
import { ExecutorRegistry } from '../executors/executor-registry.ts';
import type { ToolExecutor } from '../executors/tool-executor.ts';
import { EgressPolicy } from '../executors/mcp/egress-policy.ts';
import { McpExecutor } from '../executors/mcp/mcp-executor.ts';
import { McpSessionPool } from '../executors/mcp/mcp-session-pool.ts';
import { ToolErrorSanitizer } from '../executors/sanitize-tool-error.ts';
import { TenantToolPolicy } from '../executors/tenant-tool-policy.ts';
import type { ConversationStore } from '../store/conversation-store.ts';
import { createConversationStore } from '../store/create-conversation-store.ts';
import { BackgroundRunner } from '../engine/background-runner.ts';
import { createBackgroundStores } from '../store/create-background-stores.ts';
import { createStore } from '../store/create-store.ts';
import type { ResponseStore } from '../store/response-store.ts';
import { Tracing } from '../observability/tracing.ts';
import { newId } from '../util/ids.ts';
import { SecretRedactor } from '../util/secret-redactor.ts';
import { createGatewayMetrics } from '../observability/create-gateway-metrics.ts';
import { MeteredConversationStore } from '../observability/metered-conversation-store.ts';
import { MeteredResponseStore } from '../observability/metered-response-store.ts';
import { ResponseMetricsObserver, RoutedResponseMetricsObserver } from '../observability/response-metrics-observer.ts';
import { REQUEST_LIMITS } from '../protocol/request-limits.ts';
import { DEFAULT_TENANT, registerAuthentication } from './authenticate.ts';
import { requestTimeoutOptions } from './request-timeouts.ts';
import { clientErrorReplier } from './client-error-reply.ts';
import { BrowserOrigins } from './browser-origins.ts';
import { PageGuard } from './page-guard.ts';
import { frameworkErrorReplier, registerErrorHandling } from './error-handler.ts';
import { registerGracefulDrain } from './graceful-drain.ts';
import { parseJsonBody } from './json-body.ts';
import { BodyBudget, registerBodyBudget } from './body-budget.ts';
import { GatewayLogController } from './log-controller.ts';
import { registerRequestDecoding } from './request-decoding.ts';
import { readiness } from './readiness.ts';
import { countRequest } from './request-metrics.ts';
import { registerCompactRoute } from './routes/compact-route.ts';
import { registerDiscoveryRoutes } from './routes/discovery-routes.ts';
import { registerHealthRoutes } from './routes/health-routes.ts';
import { registerInputTokensRoute } from './routes/input-tokens-route.ts';
import { registerModelsRoute } from './routes/models-route.ts';
import { registerConversationsRoutes } from './routes/conversations-routes.ts';
import { RecentResponses } from './inspector/recent-responses.ts';
import { registerInspectorPage } from './routes/inspector-page-route.ts';
import { registerInspectorRoutes } from './routes/inspector-routes.ts';
import { registerResponsesRoute } from './routes/responses-route.ts';
import { registerStoredResponsesRoutes } from './routes/stored-responses-route.ts';
import { serveMetrics } from './serve-metrics.ts';
import { registerUsageRoute } from './routes/usage-route.ts';
import { KeyLimits } from './rate-limits/key-limits.ts';
import { RateLimitGate } from './rate-limits/rate-limit-gate.ts';
import { UpstreamLimiter } from './rate-limits/upstream-limiter.ts';
import { registerResponsesSocket } from './websocket/responses-socket-route.ts';

export interface AppOptions {
  config: GatewayConfig;
  /** Providers by name; built from the configuration when absent (tests inject their own). */
  providers?: Map<string, Provider>;
  /** The response store; built from the configuration when absent. */
  store?: ResponseStore;
  /** The conversation store; built from the configuration when absent. */
  conversations?: ConversationStore;
  /** Server-side tool executors, asked in order, before the MCP executor. */
  executors?: ToolExecutor[];
  /** Where log lines go instead of stdout (tests read them). */
  logStream?: { write(line: string): void };
}

/** After a forced stop, how long background responses get to store their final state. */
const BACKGROUND_FINISH_MS = 5_000;

const CLIENT_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Rate-limit headers browsers may read (rate-limits/rate-limit-headers.ts). */
const RATE_LIMIT_HEADERS = ['requests', 'tokens', 'tokens-day'].flatMap((suffix) => ['limit', 'remaining', 'reset'].map((kind) => `x-ratelimit-${kind}-${suffix}`)).concat('retry-after', 'retry-after-ms');

/** Builds the gateway: providers, engine and HTTP routes, ready to `listen()`. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  // An upstream or server echoing a configured credential back must not carry it into logs, errors or stored responses.
  const secrets = new SecretRedactor([...configuredSecrets(config), ...exporterHeaderSecrets()]);
  // x-should-retry: the SDKs read it before the status, in browsers too (a refusal no retry can pass).
  // Not set: any origin when every request needs a key (a page must hold one), else pages on this machine only.
  const origins = config.server.corsOrigins ?? (config.auth.apiKeys.length > 0 ? ['*'] : 'loopback');
  const browsers = origins === 'loopback' || origins.length > 0 ? new BrowserOrigins(origins, ['x-request-id', 'x-loopgate-omitted-tools', 'x-loopgate-deployment', 'idempotent-replayed', 'x-should-retry', ...RATE_LIMIT_HEADERS]) : null;
  const app = Fastify({
    logger: {
      level: config.logLevel,
      // Nothing logs headers today; should anything start to, credentials stay out.
      redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie', 'req.headers["sec-websocket-protocol"]', 'headers.authorization', 'headers["x-api-key"]', 'headers["sec-websocket-protocol"]'], censor: '[redacted]' },
      ...(secrets.active && { hooks: { streamWrite: (line: string) => secrets.redact(line) } }),
      ...(options.logStream && { stream: options.logStream }),
    },
    bodyLimit: config.server.bodyLimitBytes,
    logController: new GatewayLogController({ requestIdLogLabel: 'request_id' }),
    requestIdHeader: false,
    genReqId: (request) => {
      const fromClient = request.headers['x-request-id'];
      return typeof fromClient === 'string' && CLIENT_REQUEST_ID.test(fromClient) ? fromClient : newId('req');
    },
    // How long a request may take to arrive; responses are not bounded by it (streams run as long as the model talks).
    ...requestTimeoutOptions(config.server.requestTimeoutMs),
    // The drain answers requests that arrive while closing, in the error envelope (graceful-drain.ts).
    return503OnClosing: false,
    // A path the router refuses before any route runs answers in the error envelope too.
    frameworkErrors: frameworkErrorReplier(secrets, browsers),
    // And so does a request Node's HTTP parser refuses (headers too large, not HTTP at all).
    clientErrorHandler: clientErrorReplier(browsers),
    // Ids in paths are as long as ids may be: a client-chosen item id can be 256 characters (Fastify's default stops at 100).
    // `//responses` is what a base URL ending in `/` becomes in clients that join with one: the same route.
    routerOptions: { maxParamLength: REQUEST_LIMITS.maxIdChars, ignoreDuplicateSlashes: true },
  });

  const providers = options.providers ?? createProviders(config, app.log.child({ component: 'provider' }));
  const anthropicProvider = Object.entries(config.providers).find(([, provider]) => provider.type === 'anthropic')?.[0] ?? null;
  const geminiProvider = Object.entries(config.providers).find(([, provider]) => provider.type === 'gemini')?.[0] ?? null;
  // The providers built (tests may hand in their own), with their configured types.
  const defaultProvider = effectiveDefaultProvider(config.defaultProvider, Object.fromEntries([...providers.keys()].map((name) => [name, config.providers[name] ?? null])));
  const backgroundStores = createBackgroundStores(config, app.log.child({ component: 'background' }));
  // Null when metrics are off: then nothing below measures anything.
  const metrics = createGatewayMetrics(config, providers.keys(), DEFAULT_TENANT);
  const routingLog = app.log.child({ component: 'routing' });
  // Provider entries' own limits, counted where clients' are: shared across replicas when the store is Redis.
  const upstreamLimiter = new UpstreamLimiter({ limiter: backgroundStores.limiter, log: app.log.child({ component: 'upstream-limits' }) });
  const router = new ModelRouter(providers, config.models, defaultProvider, anthropicProvider, config.providers, {
    policy: config.routing,
    // Cool-downs are shared across replicas when the store is Redis.
    health: backgroundStores.deploymentHealth ?? new MemoryDeploymentHealth(),
    onFailover: (fields) => {
      routingLog.warn(fields, 'model deployment failed before output; trying another');
      // A dead deployment must show in metrics even while failover hides it from clients.
      metrics?.upstreamError(fields.provider, fields.code ?? 'upstream_error');
    },
    limits: {
      byProvider: Object.fromEntries(Object.entries(config.providers).map(([name, provider]) => [name, provider.limits])),
      limiter: upstreamLimiter,
      estimateInputTokens: async (request) => (await estimateTurnTokens(request)).total,
    },
  }, geminiProvider);
  // A response the memory store lets go takes its background events with it: nobody can read them once it is gone.
  const unmeteredStore = options.store ?? createStore(config.store, config.loop.deadlineMs, app.log.child({ component: 'store' }), backgroundStores.forgetEvents ?? undefined);
  const store = metrics ? new MeteredResponseStore(unmeteredStore, metrics.storeMeter('responses')) : unmeteredStore;
  const unmeteredConversations = options.conversations ?? createConversationStore(config.store);
  const conversations = metrics ? new MeteredConversationStore(unmeteredConversations, metrics.storeMeter('conversations')) : unmeteredConversations;
  const egress = new EgressPolicy({ allowedUrlPrefixes: config.mcp.allowedUrls });
  const mcpPool = new McpSessionPool({
    listTtlMs: config.mcp.listTtlMs,
    maxOutputChars: config.mcp.maxOutputChars,
    maxSessions: config.mcp.maxSessions,
    connectTimeoutMs: config.mcp.connectTimeoutMs,
    listTimeoutMs: config.mcp.listTimeoutMs,
    untrustedFetch: egress.fetch,
  });
  const mcp = new McpExecutor({
    servers: config.mcp.servers.map((server) => ({ name: server.name, url: server.url, headers: server.headers, allowedTools: server.allowedTools, timeoutMs: server.timeoutMs, requireApproval: server.requireApproval })),
    pool: mcpPool,
    egress,
    defaultTimeoutMs: config.mcp.timeoutMs,
    images: config.mcp.images,
    callItems: config.mcp.callItems,
    log: app.log.child({ component: 'mcp' }),
    catalog: { listTtlMs: config.mcp.listTtlMs, listWaitMs: config.mcp.listWaitMs, retryBaseMs: config.mcp.retryBaseMs, retryMaxMs: config.mcp.retryMaxMs },
  });
  mcp.start();
  const usage = new UsageRecorder({ store: backgroundStores.usage, log: app.log.child({ component: 'usage' }) });
  const rateLimits = new RateLimitGate({ limiter: backgroundStores.limiter, limits: new KeyLimits(config), log: app.log.child({ component: 'rate-limits' }) });
  const runner = new BackgroundRunner({ store, events: backgroundStores.events, registry: backgroundStores.registry, leaseMs: config.background.leaseMs, log: app.log.child({ component: 'background' }) });
  const compactionKey = config.compaction.key === null ? null : decodeCompactionKey(config.compaction.key);
  const compaction = compactionKey ? new CompactionCodec(compactionKey) : CompactionCodec.withRandomKey();
  if (!compactionKey) {
    app.log.warn('compaction: no compaction.key (COMPACTION_KEY) is configured, so a random key was generated: compaction items will not survive a restart, and replicas must share one key (32 bytes as base64, e.g. from `openssl rand -base64 32`)');
  }
  const executors = new ExecutorRegistry([...(options.executors ?? []), mcp], new TenantToolPolicy(config.tenants));
  const toolErrors = new ToolErrorSanitizer({ servers: config.mcp.servers, secrets });
  const contextWindows = new ContextWindows({
    models: Object.fromEntries(Object.entries(config.models).flatMap(([name, model]) => (model.contextWindow ? [[name, model.contextWindow]] : []))),
    providers: Object.fromEntries(Object.entries(config.providers).flatMap(([name, provider]) => (provider.contextWindow ? [[name, provider.contextWindow]] : []))),
  });
  // The inspector watches every response through the engine; off, it costs nothing.
  const inspected = config.inspector.enabled ? new RecentResponses(config.inspector.recentResponses) : null;
  const engine = new ResponseEngine({
    router,
    store,
    executors,
    limits: config.loop,
    controls: config.loop,
    defaultModel: config.defaultModel,
    hostedTools: config.loop.hostedTools,
    secrets,
    toolErrors,
    background: runner,
    conversations,
    compaction,
    approvals: new ApprovalAnswers(backgroundStores.idempotency, config.store.ttlSeconds),
    contextWindows,
    responseObservers: [...(metrics ? [(response: ObservedResponse) => (response.routed ? new RoutedResponseMetricsObserver(metrics, response.callsModel) : new ResponseMetricsObserver(metrics, response.callsModel))] : []), ...(inspected ? [inspected.observe] : []), () => usage],
  });
  const tracing = Tracing.create({ config: config.tracing, providers: config.providers, secrets, log: app.log.child({ component: 'tracing' }) });
  const counter = new InputTokenCounter({ router, store, executors, defaultModel: config.defaultModel, hostedTools: config.loop.hostedTools, conversations, contextWindows, compaction });

  // The API speaks JSON only; any other body type is a 415, not a string handed to validation.
  app.removeContentTypeParser('text/plain');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseJsonBody);
  registerRequestDecoding(app);
  // Without API keys, nothing a page must hold keeps other websites' pages out, a page of a name its author points at this
  // machine (DNS rebinding) being same-origin to its browser: the gateway tells pages apart itself (page-guard.ts).
  const pageGuard = config.auth.apiKeys.length === 0 && browsers?.allowed !== '*' ? new PageGuard(browsers) : null;
  // One hook for what every request gets: its id in a header, and its count once its connection is done with it.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    if (metrics) countRequest(metrics, request, reply);
    // A WebSocket upgrade is the socket route's to refuse (responses-socket-route.ts), by the same rule.
    const refusal = pageGuard && request.headers.upgrade === undefined ? pageGuard.refusal(request.headers) : null;
    done(refusal ?? undefined);
  });
  // Before any route (the CORS plugin's preflight route included): a route keeps the error handler there was when it was added.
  registerErrorHandling(app, secrets);
  if (browsers) {
    await app.register(cors, {
      // Only a browser's cross-origin request carries `Origin`: SDKs, agents and curl get no CORS headers to write and
      // check on every response (the exposed list alone is 400 bytes). The answer then depends on `Origin`, so the
      // plugin says `Vary: Origin` on every response, as caches need.
      origin: (origin, callback) => callback(null, origin === undefined || !browsers.allows(origin) ? false : browsers.allowOriginFor(origin)),
      methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
      // One string: the plugin joins an array anew for every response.
      exposedHeaders: browsers.exposedHeaders,
      maxAge: 600,
      // An OPTIONS of an allowed page that names no method is answered as a preflight, not with the plugin's plain-text 400.
      strictPreflight: false,
    });
  }
  // First: the plugin's own hooks must see every upgrade, refused ones included (it closes their sockets).
  const sockets = await registerResponsesSocket(app, {
    engine,
    secrets,
    maxFrameBytes: config.server.bodyLimitBytes,
    browsers,
    pageGuard,
    maxConnectionMs: config.server.websocketMaxConnectionMs,
    pingIntervalMs: config.server.keepAliveIntervalMs,
    stallMs: config.server.clientStallTimeoutMs,
    maxQueuedFrames: config.server.websocketMaxQueued,
    rateLimits,
    tracing,
  });
  metrics?.watch({ websocketConnections: () => sockets.size, backgroundRunning: () => runner.running, mcpServers: () => mcp.status() });
  registerAuthentication(app, config.auth.apiKeys);
  const shuttingDown = new AbortController();
  const drain = registerGracefulDrain(app, { graceMs: config.server.shutdownGraceMs, stopResponses: () => engine.shutDown(), cutUpgradedConnections: () => sockets.terminate(), onDrainStart: () => shuttingDown.abort() });
  const bodies = BodyBudget.forHeap();
  registerBodyBudget(app, bodies);
  if (config.server.bodyLimitBytes > bodies.budgetBytes) {
    app.log.warn({ body_limit_bytes: config.server.bodyLimitBytes, read_up_to_bytes: bodies.budgetBytes }, 'server.bodyLimitBytes is more than an eighth of the JS heap: larger bodies are refused (413); give the process a larger heap (--max-old-space-size) or lower the body limit');
  }
  registerHealthRoutes(app, () => readiness({ draining: () => drain.draining, providers, providerTypes: config.providers, store, mcpServers: () => mcp.status() }));
  registerModelsRoute(app, router, config.defaultModel);
  // With a shared store, a reader of a background response is sent on at once when this replica shuts down: any other replica serves its stream.
  const sharedStore = Boolean(config.store.redisUrl) || config.store.clusterNodes.length > 0;
  const pacing = { keepAliveMs: config.server.keepAliveIntervalMs, stallMs: config.server.clientStallTimeoutMs };
  const backgroundSource = { events: backgroundStores.events, store, pacing, streams: metrics, ...(sharedStore && { shutdown: shuttingDown.signal }) };
  registerResponsesRoute(app, {
    engine,
    pacing,
    background: backgroundSource,
    idempotency: { keys: backgroundStores.idempotency, responses: store, ttlSeconds: config.server.idempotencyTtlSeconds },
    streams: metrics,
    rateLimits,
    tracing,
  });
  registerInputTokensRoute(app, counter);
  registerStoredResponsesRoutes(app, store, { ...backgroundSource, runner, cancelWaitMs: config.background.cancelWaitMs });
  registerConversationsRoutes(app, conversations, compaction);
  registerCompactRoute(app, new Compactor({ router, store, codec: compaction, deadlineMs: config.loop.deadlineMs, ...(metrics && { calls: { billed: (model, provider, tenant, usage) => metrics.tokensUsed(model, provider, tenant, usage), failed: (provider, code) => metrics.upstreamError(provider, code) } }) }), { rateLimits, usage, tracing });
  registerUsageRoute(app, backgroundStores.usage);
  // On a port of its own, /metrics is no path of this one's.
  registerDiscoveryRoutes(app, { metricsPath: metrics && config.metrics.port === null ? config.metrics.path : null });
  if (metrics) serveMetrics(app, metrics, config);
  if (inspected) {
    registerInspectorPage(app);
    const tenants = [...new Set([DEFAULT_TENANT, ...config.auth.apiKeys.map((entry) => entry.tenant)])];
    registerInspectorRoutes(app, { recent: inspected, store, background: backgroundSource, tenants });
  }

  app.addHook('onClose', async () => {
    // Background responses have no connection to keep the server open: they get the same grace, then end (stored) before the stores close.
    await runner.whenIdle(config.server.shutdownGraceMs);
    engine.shutDown();
    await runner.whenIdle(BACKGROUND_FINISH_MS);
    runner.close();
    rateLimits.close();
    upstreamLimiter.close();
    await Promise.all([rateLimits.whenIdle(), usage.whenIdle()]);
    await backgroundStores.close();
    await Promise.allSettled([...[...providers.values()].map((provider) => provider.close()), store.close(), conversations.close(), mcpPool.close(), egress.close()]);
    mcp.close();
    // Last: the spans of responses the shutdown ended are exported too.
    await tracing?.shutdown();
  });
  if (measuresTokensUpFront(config)) await loadTokenCounter();
  return app;
}
