import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { parseJsonc } from './jsonc.ts';

const OpenAIChatProviderConfig = z.object({
  type: z.literal('openai-chat'),
  baseUrl: z.url(),
  apiKey: z.string().nullable().default(null),
  maxTokensField: z.enum(['max_completion_tokens', 'max_tokens']).default('max_completion_tokens'),
  connections: z.int().positive().default(256),
  connectTimeoutMs: z.int().positive().default(10_000),
  firstByteTimeoutMs: z.int().positive().default(300_000),
  idleTimeoutMs: z.int().positive().default(300_000),
});

const AnthropicProviderConfig = z.object({
  type: z.literal('anthropic'),
  baseUrl: z.url().default('https://api.anthropic.com'),
  apiKey: z.string().nullable().default(null),
  defaultMaxTokens: z.int().positive().default(8_192),
  connections: z.int().positive().default(256),
  timeoutMs: z.int().positive().default(600_000),
});

export const GatewayConfig = z.object({
  server: z
    .object({
      host: z.string().default('0.0.0.0'),
      port: z.int().min(0).max(65_535).default(8080),
      bodyLimitBytes: z.int().positive().default(52_428_800),
      keepAliveIntervalMs: z.int().positive().default(15_000),
      corsOrigins: z.array(z.string()).default(['*']),
      shutdownGraceMs: z.int().min(0).default(30_000),
    })
    .prefault({}),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  defaultModel: z.string().min(1).nullable().default(null),
  defaultProvider: z.string().nullable().default('openai'),
  providers: z.record(z.string(), z.discriminatedUnion('type', [OpenAIChatProviderConfig, AnthropicProviderConfig])).default({}),
  models: z.record(z.string(), z.object({ provider: z.string(), model: z.string().optional() })).default({}),
  store: z
    .object({
      redisUrl: z.string().nullable().default(null),
      keyPrefix: z.string().default('loopgate:'),
      ttlSeconds: z.int().positive().default(2_592_000),
      maxEntries: z.int().positive().default(10_000),
      commandTimeoutMs: z.int().positive().default(1_000),
    })
    .prefault({}),
  loop: z
    .object({
      maxTurns: z.int().positive().default(10),
      toolTimeoutMs: z.int().positive().default(60_000),
      deadlineMs: z.int().positive().default(600_000),
      maxConsecutiveToolFailures: z.int().min(0).default(0),
      pausedStatus: z.enum(['requires_action', 'completed']).default('requires_action'),
    })
    .prefault({}),
  mcp: z
    .object({
      servers: z
        .array(
          z.object({
            name: z.string().regex(/^[a-zA-Z0-9_-]{1,32}$/, 'server names are 1-32 of A-Z a-z 0-9 _ -'),
            url: z.url(),
            headers: z.record(z.string(), z.string()).default({}),
            allowed_tools: z.array(z.string()).nullable().default(null),
            // Operator servers are trusted by the operator; approvals are for servers named in requests.
            require_approval: z.literal('never').default('never'),
            timeout_ms: z.int().positive().nullable().default(null),
          }),
        )
        .default([]),
      allowedUrls: z.array(z.string()).default([]),
      listTtlMs: z.int().positive().default(300_000),
      timeoutMs: z.int().positive().default(60_000),
      maxOutputChars: z.int().positive().default(100_000),
      maxSessions: z.int().positive().default(256),
    })
    .prefault({}),
  auth: z
    .object({
      apiKeys: z
        .array(z.object({ key: z.string().min(8), tenant: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'tenant names are 1-64 of A-Z a-z 0-9 _ . -') }))
        .default([]),
    })
    .prefault({}),
});

export type GatewayConfig = z.infer<typeof GatewayConfig>;
export type ProviderConfig = GatewayConfig['providers'][string];

const DEFAULT_CONFIG_FILE = fileURLToPath(new URL('../../config/loopgate.jsonc', import.meta.url));

/**
 * The configuration in force: the file (LOOPGATE_CONFIG or the shipped
 * default), then environment variables on top. Fails loudly, naming the key,
 * when a value is wrong — a gateway must not start half-configured.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const file = env.LOOPGATE_CONFIG || DEFAULT_CONFIG_FILE;
  const raw = parseJsonc(readFileSync(file, 'utf8')) as Record<string, any>;
  applyEnv(raw, env);
  const parsed = GatewayConfig.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`Invalid configuration at '${issue.path.join('.')}' (${file} and environment): ${issue.message}`);
  }
  return parsed.data;
}

function applyEnv(raw: Record<string, any>, env: NodeJS.ProcessEnv): void {
  const server = (raw.server ??= {});
  if (env.HOST) server.host = env.HOST;
  if (env.PORT) server.port = Number(env.PORT);
  if (env.BODY_LIMIT_BYTES) server.bodyLimitBytes = Number(env.BODY_LIMIT_BYTES);
  if (env.SSE_KEEPALIVE_MS) server.keepAliveIntervalMs = Number(env.SSE_KEEPALIVE_MS);
  if (env.SHUTDOWN_GRACE_MS) server.shutdownGraceMs = Number(env.SHUTDOWN_GRACE_MS);
  if (env.CORS_ORIGINS !== undefined) server.corsOrigins = env.CORS_ORIGINS.split(',').map((origin) => origin.trim()).filter(Boolean);
  if (env.LOG_LEVEL) raw.logLevel = env.LOG_LEVEL;
  if (env.DEFAULT_MODEL) raw.defaultModel = env.DEFAULT_MODEL;
  if (env.DEFAULT_PROVIDER) raw.defaultProvider = env.DEFAULT_PROVIDER;
  const store = (raw.store ??= {});
  if (env.REDIS_URL) store.redisUrl = env.REDIS_URL;
  if (env.REDIS_KEY_PREFIX) store.keyPrefix = env.REDIS_KEY_PREFIX;
  if (env.STORE_TTL_SECONDS) store.ttlSeconds = Number(env.STORE_TTL_SECONDS);
  const loop = (raw.loop ??= {});
  if (env.MAX_TURNS) loop.maxTurns = Number(env.MAX_TURNS);
  if (env.TOOL_TIMEOUT_MS) loop.toolTimeoutMs = Number(env.TOOL_TIMEOUT_MS);
  if (env.RESPONSE_DEADLINE_MS) loop.deadlineMs = Number(env.RESPONSE_DEADLINE_MS);
  if (env.PAUSED_STATUS) loop.pausedStatus = env.PAUSED_STATUS;
  const mcp = (raw.mcp ??= {});
  if (env.MCP_SERVERS) mcp.servers = parseJsonArray('MCP_SERVERS', env.MCP_SERVERS);
  if (env.MCP_ALLOWED_URLS !== undefined) mcp.allowedUrls = env.MCP_ALLOWED_URLS.split(',').map((prefix) => prefix.trim()).filter(Boolean);
  if (env.API_KEYS) raw.auth = { ...raw.auth, apiKeys: parseApiKeys(env.API_KEYS) };
  if (env.ANTHROPIC_API_KEY || env.ANTHROPIC_BASE_URL) {
    const providers = (raw.providers ??= {});
    const anthropic = (providers.anthropic ??= { type: 'anthropic' });
    if (env.ANTHROPIC_API_KEY) anthropic.apiKey = env.ANTHROPIC_API_KEY;
    if (env.ANTHROPIC_BASE_URL) anthropic.baseUrl = env.ANTHROPIC_BASE_URL;
  }
  if (env.OPENAI_BASE_URL || env.OPENAI_API_KEY) {
    const providers = (raw.providers ??= {});
    const openai = (providers.openai ??= { type: 'openai-chat', baseUrl: 'https://api.openai.com/v1' });
    if (env.OPENAI_BASE_URL) openai.baseUrl = env.OPENAI_BASE_URL;
    if (env.OPENAI_API_KEY) openai.apiKey = env.OPENAI_API_KEY;
  }
}

/** `API_KEYS` is a JSON object mapping each key to its tenant: `{"sk-team-a-…": "team-a"}`. */
function parseApiKeys(value: string): { key: string; tenant: string }[] {
  const parsed = parseJsonEnv('API_KEYS', value, 'object', 'a JSON object mapping API keys to tenant names');
  return Object.entries(parsed as Record<string, unknown>).map(([key, tenant]) => ({ key, tenant: String(tenant) }));
}

function parseJsonArray(name: string, value: string): unknown[] {
  return parseJsonEnv(name, value, 'array', 'a JSON array') as unknown[];
}

/** An environment variable holding JSON of one shape, or an error that says what it must be. */
function parseJsonEnv(name: string, value: string, shape: 'object' | 'array', description: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  const fits = shape === 'array' ? Array.isArray(parsed) : parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed);
  if (!fits) throw new Error(`${name} must be ${description}.`);
  return parsed;
}
