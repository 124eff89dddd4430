import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { checkReferences } from './check-references.ts';
import { compactionKey } from './compaction-key.ts';
import { readConfigFile } from './config-file.ts';
import { ConfigurationError, isPlainObject, type ConfigProblem } from './config-problem.ts';
import { ConfigSources } from './config-sources.ts';
import { describeIssue } from './describe-issue.ts';
import { applyEnvironment } from './environment-variables.ts';
import { checkVariableProviders, fileProvidersOf } from './variable-providers.ts';
import { renameLegacyMcpServerKeys, upgradeLegacyKeys } from './legacy-keys.ts';
import { misspeltVariables } from './misspelt-variables.ts';
import { operatorRequireApproval } from './operator-approval-schema.ts';
import { ProviderConfig, rateLimit, structuredOutputMode, textToolCallRetries, toolCallMode } from './provider-config.ts';
import { findUnknownKeys } from './schema-introspection.ts';
import { browserOrigin, httpUrl, mcpServerUrl, redisUrl } from './url-schemas.ts';
import { timerMs } from './timer-ms.ts';

/** Allow and deny lists: deny wins; an allow list, when present, permits only what it lists. */
const allowDeny = <T extends z.ZodType<string>>(entry: T) => z.object({ allow: z.array(entry).optional(), deny: z.array(entry).default([]) }).prefault({});

const TenantPolicyConfig = z.object({
  /** Server-side tools by the name the model calls them (`<server>__<tool>` for MCP tools), `*` matching any run of characters. */
  // MCP tool names may hold `.` and `/` too (the specification's characters): `*__files.remove`.
  tools: allowDeny(z.string().regex(/^[A-Za-z0-9_.\/*-]{1,128}$/, 'tool-name patterns are 1-128 of A-Z a-z 0-9 _ - . / and the wildcard *')),
  /** MCP server URLs as origins or path prefixes, for operator servers and servers named in requests. */
  mcpServerUrls: allowDeny(httpUrl),
});

const KeyLimitsConfig = z.object({
  requestsPerMinute: rateLimit.optional(),
  tokensPerMinute: rateLimit.optional(),
  tokensPerDay: rateLimit.optional(),
  concurrentResponses: rateLimit.optional(),
});

/** An address to listen on: an IP address or a host name, never a URL, a port or a dotted number that is no IPv4 address. */
const listenHost = z.union([z.ipv4(), z.ipv6(), z.hostname().refine((host) => !/^[\d.]+$/.test(host))], { error: 'must be an IP address or a host name such as 0.0.0.0, ::, 127.0.0.1 or localhost (no scheme, no port)' });

export const GatewayConfig = z.object({
  server: z
    .object({
      host: listenHost.default('0.0.0.0'),
      port: z.int().min(0).max(65_535).default(8080),
      bodyLimitBytes: z.int().positive().default(52_428_800),
      /**
       * Longest a request may take to arrive, headers and body (0: no bound).
       * Node's own default; it bounds a client trickling its body, never a
       * response: streams run as long as the model talks.
       */
      requestTimeoutMs: timerMs.min(0).default(300_000),
      keepAliveIntervalMs: timerMs.positive().default(15_000),
      /** How long a streaming client may take nothing (its socket full, not reading) before it is cut (0: no bound). */
      clientStallTimeoutMs: timerMs.min(0).default(60_000),
      /** Null (not set): any origin when API keys are configured, else pages on this machine only (http/browser-origins.ts). */
      corsOrigins: z.array(browserOrigin).nullable().default(null),
      shutdownGraceMs: timerMs.min(0).default(30_000),
      /** How long an `Idempotency-Key` on POST /v1/responses keeps its response, per tenant. */
      idempotencyTtlSeconds: z.int().positive().default(86_400),
      /** How long one WebSocket connection on /v1/responses may stay open (OpenResponses: 60 minutes). */
      websocketMaxConnectionMs: timerMs.positive().default(3_600_000),
      /** response.create events that may wait behind a WebSocket's running response. */
      websocketMaxQueued: z.int().positive().default(32),
    })
    .prefault({}),
  logLevel: z.string().toLowerCase().pipe(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])).default('info'),
  defaultModel: z.string().min(1).nullable().default(null),
  defaultProvider: z.string().nullable().default('openai'),
  providers: z.record(z.string(), ProviderConfig).default({}),
  models: z
    .record(
      z.string(),
      z.object({
        /** The one provider serving the alias; leave out when `deployments` lists several. */
        provider: z.string().optional(),
        model: z.string().optional(),
        /** Several places to serve the alias from, by weight, with failover and cool-down (`routing`). */
        deployments: z.array(z.object({ provider: z.string(), model: z.string().optional(), weight: z.number().positive().default(1) })).min(1).optional(),
        /** An alias with a larger context window to retry a call on when this one's upstream refuses the input as too long. */
        contextFallback: z.string().optional(),
        /** Context window, in tokens, input and output together (`truncation: "auto"`). */
        contextWindow: z.int().positive().optional(),
        /** `native` or `text` (tools described in the prompt, calls read from the text); unset: the provider's. */
        toolCalls: toolCallMode.optional(),
        textToolCallRetries: textToolCallRetries.optional(),
        /** `native` or `prompt` (text.format described in the instructions, not sent); unset: the provider's. */
        structuredOutput: structuredOutputMode.optional(),
        /** `false`: the model takes no images (tool outputs' images described in text, a message's refused); unset: the provider's. */
        vision: z.boolean().optional(),
      })
        .refine((alias) => alias.provider !== undefined || alias.deployments !== undefined, { message: 'a model needs a provider or deployments' })
        // With deployments each names its provider: a provider beside them would be ignored while /v1/models still named it.
        .refine((alias) => alias.provider === undefined || alias.deployments === undefined, { message: 'a model takes a provider or deployments, not both (each deployment names its own provider)' }),
    )
    .default({}),
  /** How aliases with `deployments` (or a `contextFallback`) fail over (providers/routing/). */
  routing: z
    .object({
      /** Attempts after the first, over the deployments in weighted order, revisiting them after a back-off. */
      retries: z.int().min(0).max(10).default(2),
      /** Pause before revisiting a deployment, doubled each further round. */
      backoffMs: timerMs.min(0).default(250),
      /** A longer upstream `retry-after` is not waited for; a deployment answering 429 cools down at most this long. */
      maxRetryAfterMs: timerMs.min(0).default(30_000),
      /** How long a failing deployment is skipped. */
      cooldownMs: timerMs.min(0).default(30_000),
      /** Failures in a row (connection errors, 5xx, overloaded) that cool a deployment down. */
      failuresBeforeCooldown: z.int().positive().default(3),
    })
    .prefault({}),
  store: z
    .object({
      redisUrl: redisUrl.nullable().default(null),
      /** Seed nodes of a Redis Cluster; when set, the store runs on the cluster instead of `redisUrl`. */
      clusterNodes: z.array(redisUrl).default([]),
      keyPrefix: z.string().default('loopgate:'),
      ttlSeconds: z.int().positive().default(2_592_000),
      maxEntries: z.int().positive().default(10_000),
      /** Memory store only: most bytes of stored responses' JSON kept (512 MiB). */
      maxBytes: z.int().positive().default(512 * 1024 * 1024),
      commandTimeoutMs: timerMs.positive().default(1_000),
      connectTimeoutMs: timerMs.positive().default(2_000),
    })
    .prefault({}),
  loop: z
    .object({
      maxTurns: z.int().positive().default(10),
      toolTimeoutMs: timerMs.positive().default(60_000),
      deadlineMs: timerMs.positive().default(600_000),
      maxConsecutiveToolFailures: z.int().min(0).default(0),
      pausedStatus: z.enum(['requires_action', 'completed']).default('requires_action'),
      hostedTools: z.enum(['omit', 'reject']).default('omit'),
      // Loop controls (README: "Loop controls"); a request's "loopgate:loop" may change them within requestLimits.
      /** Tool calls run per model turn (0: no cap); the rest get an error output. */
      maxToolCallsPerTurn: z.int().min(0).default(0),
      /** At maxTurns / max_tool_calls: end `incomplete`, or one last model call without tools for a final answer. */
      atLimit: z.enum(['incomplete', 'final_answer']).default('incomplete'),
      /** Tools (as the model calls them, e.g. `docs__submit`) whose successful call ends the response after its turn. */
      terminalTools: z.array(z.string().min(1)).default([]),
      completionCheck: z
        .object({
          enabled: z.boolean().default(false),
          /** null: seed 000's wording (README: "Loop controls"). */
          prompt: z.string().min(1).nullable().default(null),
        })
        .prefault({}),
      outputValidation: z
        .object({
          /** Check every final answer against text.format (json_schema / json_object) and let the model retry. */
          enabled: z.boolean().default(false),
          /** Answers the model may give in all (1: checked, never retried). */
          maxAttempts: z.int().min(1).default(3),
          /** The operator's own judge of every final answer, when validation is on; requests cannot turn it off. */
          validator: z
            .discriminatedUnion('type', [
              z.object({ type: z.literal('http'), url: httpUrl, headers: z.record(z.string(), z.string()).default({}), timeoutMs: timerMs.positive().default(10_000) }),
              z.object({ type: z.literal('mcp'), tool: z.string().regex(/^[a-zA-Z0-9_-]{1,32}__.+$/, 'an operator MCP tool as the model calls it: <server>__<tool>') }),
            ])
            .nullable()
            .default(null),
        })
        .prefault({}),
      requestLimits: z
        .object({
          /** Highest "loopgate:loop".max_turns a request may ask for; null: maxTurns (requests may only lower it). */
          maxTurns: z.int().positive().nullable().default(null),
          maxValidationAttempts: z.int().min(1).default(5),
        })
        .prefault({}),
    })
    .prefault({}),
  background: z
    .object({
      /** An owner's lease on a running background response; a replica silent this long is presumed dead and its responses end as failed. */
      leaseMs: timerMs.min(500).default(5_000),
      /** Most events kept per background response for resuming streams. */
      maxEvents: z.int().positive().default(10_000),
      /** Most bytes of events kept per background response. */
      maxEventBytes: z.int().positive().default(8_388_608),
      /** How long a background response's events are kept after its last one. */
      eventsTtlSeconds: z.int().positive().default(3_600),
      /** Longest `POST /v1/responses/{id}/cancel` waits for the response to end before answering with its state. */
      cancelWaitMs: timerMs.min(0).default(10_000),
    })
    .prefault({}),
  mcp: z
    .object({
      servers: z
        .array(
          // Old snake_case keys (allowed_tools, timeout_ms, require_approval) still work: legacy-keys.ts.
          z.preprocess(
            renameLegacyMcpServerKeys,
            z.object({
              // Without "__": it joins a server's name to its tools' (<name>__<tool>), and in a name it would make two servers' tools collide.
              name: z.string().regex(/^(?!.*__)[a-zA-Z0-9_-]{1,32}$/, 'server names are 1-32 of A-Z a-z 0-9 _ -, without "__", which joins a name to its tools\''),
              url: mcpServerUrl,
              headers: z.record(z.string(), z.string()).default({}),
              allowedTools: z.array(z.string()).nullable().default(null),
              // Which of its tools wait for the client's approval (operator-approval-schema.ts).
              requireApproval: operatorRequireApproval.default('never'),
              timeoutMs: timerMs.positive().nullable().default(null),
            }),
          ),
        )
        .default([]),
      allowedUrls: z.array(httpUrl).default([]),
      listTtlMs: timerMs.positive().default(300_000),
      timeoutMs: timerMs.positive().default(60_000),
      connectTimeoutMs: timerMs.positive().default(5_000),
      listTimeoutMs: timerMs.positive().default(10_000),
      listWaitMs: timerMs.min(0).default(500),
      retryBaseMs: timerMs.positive().default(1_000),
      retryMaxMs: timerMs.positive().default(60_000),
      maxOutputChars: z.int().positive().default(100_000),
      /** Images tools answer with: `attach` them for the model (after the output's text), or `describe` them in a line of text (for models without vision). */
      images: z.enum(['attach', 'describe']).default('attach'),
      /** How operator servers' calls show in the output: OpenAI's `mcp_call` items, or `function_call` + `function_call_output` (seed 004's shape; clients that run every function_call they see cannot take it). */
      callItems: z.enum(['mcp', 'function']).default('mcp'),
      maxSessions: z.int().positive().default(256),
    })
    .prefault({}),
  compaction: z
    .object({
      /** AES-256-GCM key sealing compaction items (compaction-key.ts); null: a random one per process, with a warning. */
      key: compactionKey.nullable().default(null),
    })
    .prefault({}),
  /** Prometheus metrics (README: "Metrics"). */
  metrics: z
    .object({
      enabled: z.boolean().default(true),
      /** null: served on the main port at `path`; a port number: a listener of its own (0: any free port). */
      port: z.int().min(0).max(65_535).nullable().default(null),
      /** The separate listener's address; null: server.host. */
      host: z.string().min(1).nullable().default(null),
      path: z.string().regex(/^\/[A-Za-z0-9._~\/-]*$/, 'an absolute URL path such as /metrics').default('/metrics'),
      /** A bearer token scrapes must send; with API keys on and no token, the main port's /metrics refuses every scrape. */
      token: z.string().min(16).nullable().default(null),
    })
    .prefault({}),
  inspector: z
    .object({
      /** The live inspector page (/inspector) and its data endpoints (/v1/inspector/…). */
      enabled: z.boolean().default(false),
      /** Responses each replica remembers for it, newest first (older ones are read from the store, without timings). */
      recentResponses: z.int().positive().max(100_000).default(500),
    })
    .prefault({}),
  /** OpenTelemetry traces over OTLP/HTTP (observability/tracing.ts): a span per response, model call and tool call. */
  tracing: z
    .object({
      /** null: on when an endpoint is set (here, or OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); true: on, to the OTLP default when none is. */
      enabled: z.boolean().nullable().default(null),
      /** The OTLP/HTTP traces URL, used as is (…/v1/traces); null: http://localhost:4318/v1/traces. */
      endpoint: httpUrl.nullable().default(null),
      /** OTLP's own default, protobuf, costs half the CPU and bytes of JSON per span. */
      protocol: z.enum(['http/protobuf', 'http/json']).default('http/protobuf'),
      /** Sent with every export (a tracing backend's API key); OTEL_EXPORTER_OTLP_HEADERS adds to them. */
      headers: z.record(z.string(), z.string()).default({}),
      serviceName: z.string().min(1).default('loopgate'),
      /** Share of traces started here that are kept; a client's traceparent decides for its own traces. */
      sampleRatio: z.number().min(0).max(1).default(1),
      /** Prompts, completions, tool arguments and results on spans (the GenAI conventions' opt-in attributes). */
      captureContent: z.boolean().default(false),
    })
    .prefault({}),
  /** Per-tenant tool policy: a tenant's own entry, else "*", else no restriction (tenant-tool-policy.ts). */
  tenants: z.record(z.string(), TenantPolicyConfig).default({}),
  auth: z
    .object({
      apiKeys: z
        .array(
          z.object({
            key: z.string().min(8),
            tenant: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'tenant names are 1-64 of A-Z a-z 0-9 _ . -'),
            /** This key's own limits; a limit left out is the top-level `limits` one, null lifts it. */
            limits: KeyLimitsConfig.optional(),
            /** An operator's key: reads every tenant's usage (GET /v1/usage) and sees every tenant in the inspector. */
            admin: z.boolean().default(false),
          }),
        )
        .default([]),
    })
    .prefault({}),
  /** Limits of every API key (or of the whole gateway, without keys) that sets none of its own; null: unlimited (README: "Usage and limits"). */
  limits: z
    .object({
      requestsPerMinute: rateLimit.default(null),
      tokensPerMinute: rateLimit.default(null),
      tokensPerDay: rateLimit.default(null),
      concurrentResponses: rateLimit.default(null),
    })
    .prefault({}),
  usage: z
    .object({
      /** How long usage per tenant, model and day is kept. */
      retentionDays: z.int().positive().max(3_660).default(400),
    })
    .prefault({}),
});

export type GatewayConfig = z.infer<typeof GatewayConfig>;
export type ProviderConfig = GatewayConfig['providers'][string];

const DEFAULT_CONFIG_FILE = fileURLToPath(new URL('../../config/loopgate.jsonc', import.meta.url));

/** The configuration with its doubtful points, or every problem that stops it. */
export type ConfigResolution =
  | { ok: true; config: GatewayConfig; file: string; warnings: ConfigProblem[] }
  | { ok: false; problems: ConfigProblem[]; file: string; warnings: ConfigProblem[] };

/**
 * The configuration in force: the file (LOOPGATE_CONFIG or the shipped
 * default), then environment variables on top. Collects every problem at once
 * — each naming its environment variable or file:line:column — rather than
 * stopping at the first; a gateway must not start half-configured.
 */
export function resolveConfig(env: NodeJS.ProcessEnv = process.env): ConfigResolution {
  const file = readConfigFile(env.LOOPGATE_CONFIG || DEFAULT_CONFIG_FILE);
  const sources = new ConfigSources(file);
  const raw: Record<string, unknown> = isPlainObject(file.value) ? file.value : {};
  const fileProviders = fileProvidersOf(raw);
  const problems = [...file.problems, ...applyEnvironment(raw, env, GatewayConfig, sources)];
  problems.push(...checkVariableProviders(fileProviders, raw, env, sources));
  const legacy = upgradeLegacyKeys(raw, sources);
  const warnings = [...legacy.warnings, ...misspeltVariables(env)];
  problems.push(...legacy.problems);
  for (const unknown of findUnknownKeys(GatewayConfig, raw)) {
    const hint = unknown.suggestion ? `; did you mean ${JSON.stringify(unknown.suggestion)}?` : '';
    problems.push(sources.problem(unknown.path, `is not a known key${hint}`, { at: 'key' }));
  }
  // Without the file's providers, references to them would all look wrong.
  if (file.problems.length === 0) {
    const references = checkReferences(raw, sources);
    problems.push(...references.problems);
    warnings.push(...references.warnings);
  }
  const parsed = GatewayConfig.safeParse(raw);
  if (!parsed.success) problems.push(...parsed.error.issues.map((issue) => describeIssue(issue, raw, GatewayConfig, sources)));
  if (problems.length > 0 || !parsed.success) return { ok: false, problems, file: file.path, warnings };
  return { ok: true, config: parsed.data, file: file.path, warnings };
}

/** The configuration in force, or a ConfigurationError listing every problem (warnings are dropped: use resolveConfig to see them). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const resolution = resolveConfig(env);
  if (!resolution.ok) throw new ConfigurationError(resolution.problems);
  return resolution.config;
}
