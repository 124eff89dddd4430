import { getNodeValue, parseTree } from 'jsonc-parser';
import type { z } from 'zod';
import { formatPath, isPlainObject, valueAt, type ConfigPath, type ConfigProblem } from './config-problem.ts';
import type { AppliedVariable, ConfigSources } from './config-sources.ts';
import { describeSchema, schemaAt } from './schema-introspection.ts';

/** How a variable's text becomes a configuration value. */
type Parser =
  /** The text as given. */
  | 'text'
  /** A whole number (range checked by the schema). */
  | 'integer'
  /** true/false (also 1/0, yes/no, on/off). */
  | 'boolean'
  /** Comma-separated. */
  | 'list'
  /** A JSON array. */
  | 'json-array'
  /** A JSON object mapping each API key to its tenant, stored as `[{key, tenant}]`. */
  | 'api-keys'
  /** An OTLP/HTTP base URL, stored with the traces path `v1/traces` appended (OTLP's rule for OTEL_EXPORTER_OTLP_ENDPOINT). */
  | 'otlp-base-url';

export interface EnvironmentVariable {
  name: string;
  /** Where the value lands in the configuration; null for those read elsewhere (LOOPGATE_CONFIG names the file, LOOPGATE_BUILD the build). */
  path: ConfigPath | null;
  parse: Parser;
  /** One line for `--help`. */
  help: string;
  /** Set empty, the variable means "none" (an empty list) rather than unset, as every other empty variable is. */
  emptyMeansNone?: true;
  /** An object created first when the configuration lacks it, e.g. the provider an API key belongs to. */
  creates?: { path: ConfigPath; value: Record<string, unknown> };
}

const OPENAI_PROVIDER = { path: ['providers', 'openai'], value: { type: 'openai-chat', baseUrl: 'https://api.openai.com/v1' } };
const ANTHROPIC_PROVIDER = { path: ['providers', 'anthropic'], value: { type: 'anthropic' } };
const GEMINI_PROVIDER = { path: ['providers', 'gemini'], value: { type: 'gemini' } };

/**
 * Every environment variable loopgate reads, in `--help` order. Each overrides
 * the configuration file at its path; empty variables count as unset (except
 * lists, where empty means none).
 */
export const ENVIRONMENT_VARIABLES: readonly EnvironmentVariable[] = [
  { name: 'LOOPGATE_CONFIG', path: null, parse: 'text', help: 'configuration file (JSON with comments) read before these variables; default config/loopgate.jsonc' },
  { name: 'HOST', path: ['server', 'host'], parse: 'text', help: 'listen address' },
  { name: 'PORT', path: ['server', 'port'], parse: 'integer', help: 'listen port' },
  { name: 'LOG_LEVEL', path: ['logLevel'], parse: 'text', help: 'log level: fatal, error, warn, info, debug, trace or silent (any case)' },
  { name: 'OPENAI_BASE_URL', path: ['providers', 'openai', 'baseUrl'], parse: 'text', help: 'OpenAI-compatible Chat Completions base URL, including its path (/v1)', creates: OPENAI_PROVIDER },
  { name: 'OPENAI_API_KEY', path: ['providers', 'openai', 'apiKey'], parse: 'text', help: 'sent to that upstream as Authorization: Bearer …', creates: OPENAI_PROVIDER },
  { name: 'ANTHROPIC_API_KEY', path: ['providers', 'anthropic', 'apiKey'], parse: 'text', help: "adds the Anthropic provider (Messages API) with this key", creates: ANTHROPIC_PROVIDER },
  { name: 'ANTHROPIC_BASE_URL', path: ['providers', 'anthropic', 'baseUrl'], parse: 'text', help: 'Anthropic API base URL (adds the provider too)', creates: ANTHROPIC_PROVIDER },
  { name: 'GEMINI_API_KEY', path: ['providers', 'gemini', 'apiKey'], parse: 'text', help: 'adds the Gemini provider (native generateContent API) with this key, sent as x-goog-api-key', creates: GEMINI_PROVIDER },
  { name: 'GEMINI_BASE_URL', path: ['providers', 'gemini', 'baseUrl'], parse: 'text', help: 'Gemini API base URL, e.g. a Vertex-compatible endpoint (adds the provider too)', creates: GEMINI_PROVIDER },
  { name: 'DEFAULT_MODEL', path: ['defaultModel'], parse: 'text', help: 'model for requests that name none (otherwise they are a 400)' },
  { name: 'DEFAULT_PROVIDER', path: ['defaultProvider'], parse: 'text', help: 'provider serving model names not listed in "models"; must be a configured provider' },
  { name: 'API_KEYS', path: ['auth', 'apiKeys'], parse: 'api-keys', help: 'JSON object of client API keys to tenant names, {"sk-…": "team-a"}; unset: no authentication' },
  { name: 'COMPACTION_KEY', path: ['compaction', 'key'], parse: 'text', help: 'key sealing compaction items (POST /v1/responses/compact): 32 bytes as base64 or 64 hex digits, the same on every replica; unset: a random key per start' },
  { name: 'REDIS_URL', path: ['store', 'redisUrl'], parse: 'text', help: 'redis:// or rediss:// URL: keep responses in Redis (shared by replicas) instead of memory' },
  { name: 'REDIS_CLUSTER_NODES', path: ['store', 'clusterNodes'], parse: 'list', help: 'comma-separated redis:// URLs of Redis Cluster nodes: keep responses on the cluster (replaces REDIS_URL)' },
  { name: 'WEBSOCKET_MAX_CONNECTION_MS', path: ['server', 'websocketMaxConnectionMs'], parse: 'integer', help: 'longest a WebSocket connection on /v1/responses stays open (default 60 minutes)' },
  { name: 'BACKGROUND_LEASE_MS', path: ['background', 'leaseMs'], parse: 'integer', help: 'background responses: a replica silent this long is presumed dead and its responses end as failed' },
  { name: 'REDIS_KEY_PREFIX', path: ['store', 'keyPrefix'], parse: 'text', help: 'prefix of every Redis key' },
  { name: 'STORE_TTL_SECONDS', path: ['store', 'ttlSeconds'], parse: 'integer', help: 'how long stored responses live, in seconds' },
  { name: 'MCP_SERVERS', path: ['mcp', 'servers'], parse: 'json-array', help: 'JSON array of operator MCP servers [{"name","url","headers","allowedTools","timeoutMs"}]' },
  { name: 'MCP_CALL_ITEMS', path: ['mcp', 'callItems'], parse: 'text', help: "how operator MCP servers' calls show in the output: mcp (OpenAI's mcp_call items) or function (function_call + function_call_output)" },
  { name: 'MCP_IMAGES', path: ['mcp', 'images'], parse: 'text', help: 'images MCP tools answer with: attach (shown to the model, after the output text) or describe (a line of text, for models without vision)' },
  { name: 'MCP_ALLOWED_URLS', path: ['mcp', 'allowedUrls'], parse: 'list', emptyMeansNone: true, help: 'comma-separated URL prefixes request-named MCP servers may reach despite the egress policy' },
  { name: 'MAX_TURNS', path: ['loop', 'maxTurns'], parse: 'integer', help: 'model calls per response before it ends incomplete (max_turns)' },
  { name: 'TOOL_TIMEOUT_MS', path: ['loop', 'toolTimeoutMs'], parse: 'integer', help: 'longest one tool call may run, in milliseconds' },
  { name: 'RESPONSE_DEADLINE_MS', path: ['loop', 'deadlineMs'], parse: 'integer', help: 'longest one response may take, all turns included, in milliseconds' },
  { name: 'PAUSED_STATUS', path: ['loop', 'pausedStatus'], parse: 'text', help: 'status of a response paused for client tools: requires_action or completed' },
  { name: 'HOSTED_TOOLS', path: ['loop', 'hostedTools'], parse: 'text', help: 'hosted tools the serving upstream does not run (web_search on a Chat Completions model, …): omit (left out, reported in x-loopgate-omitted-tools) or reject (a 400)' },
  { name: 'LOOP_AT_LIMIT', path: ['loop', 'atLimit'], parse: 'text', help: 'at max_turns / max_tool_calls: incomplete, or final_answer (one last model call without tools)' },
  { name: 'LOOP_TERMINAL_TOOLS', path: ['loop', 'terminalTools'], parse: 'list', help: 'comma-separated tools (as the model calls them) whose successful call ends the response' },
  { name: 'LOOP_COMPLETION_CHECK', path: ['loop', 'completionCheck', 'enabled'], parse: 'boolean', help: 'ask the model once to confirm it is done before accepting its first answer after tools' },
  { name: 'LOOP_OUTPUT_VALIDATION', path: ['loop', 'outputValidation', 'enabled'], parse: 'boolean', help: 'check final answers against text.format (json_schema) and let the model retry' },
  { name: 'BODY_LIMIT_BYTES', path: ['server', 'bodyLimitBytes'], parse: 'integer', help: 'largest request body in bytes (larger: 413)' },
  { name: 'REQUEST_TIMEOUT_MS', path: ['server', 'requestTimeoutMs'], parse: 'integer', help: 'longest a request may take to arrive, headers and body, in milliseconds (slower: 408; 0: no bound)' },
  { name: 'SSE_KEEPALIVE_MS', path: ['server', 'keepAliveIntervalMs'], parse: 'integer', help: 'keep-alive comment interval on idle streams, in milliseconds' },
  { name: 'CLIENT_STALL_TIMEOUT_MS', path: ['server', 'clientStallTimeoutMs'], parse: 'integer', help: 'how long a streaming client may take nothing (connected but not reading) before it is cut, in milliseconds (0: no bound)' },
  { name: 'SHUTDOWN_GRACE_MS', path: ['server', 'shutdownGraceMs'], parse: 'integer', help: 'on SIGTERM/SIGINT, how long responses in flight may finish, in milliseconds' },
  { name: 'METRICS_ENABLED', path: ['metrics', 'enabled'], parse: 'boolean', help: 'serve Prometheus metrics (default true)' },
  { name: 'METRICS_PORT', path: ['metrics', 'port'], parse: 'integer', help: 'serve /metrics on this port instead of the main one (meant for an internal network)' },
  { name: 'METRICS_TOKEN', path: ['metrics', 'token'], parse: 'text', help: 'bearer token scrapes of /metrics must send (16 characters or more); needed on the main port when API_KEYS is set' },
  { name: 'LOOPGATE_BUILD', path: null, parse: 'text', help: 'the build GET /version reports (e.g. the git commit the image was built from); unset: `git rev-parse` of the checkout, if any' },
  { name: 'INSPECTOR_ENABLED', path: ['inspector', 'enabled'], parse: 'boolean', help: 'serve the live inspector page at /inspector/ and its data at /v1/inspector/… (API keys apply; admin keys see every tenant)' },
  { name: 'CORS_ORIGINS', path: ['server', 'corsOrigins'], parse: 'list', emptyMeansNone: true, help: 'comma-separated browser origins, * for any, empty to disable CORS' },
  // OpenTelemetry's own names; the traces endpoint after the base, so that it wins when both are set.
  { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', path: ['tracing', 'endpoint'], parse: 'otlp-base-url', help: 'OTLP/HTTP collector base URL (http://collector:4318): turns traces on, sent to <url>/v1/traces' },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', path: ['tracing', 'endpoint'], parse: 'text', help: 'OTLP/HTTP traces URL used as is (…/v1/traces): turns traces on' },
  { name: 'OTEL_EXPORTER_OTLP_PROTOCOL', path: ['tracing', 'protocol'], parse: 'text', help: 'http/protobuf or http/json (the traces variable below wins)' },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', path: ['tracing', 'protocol'], parse: 'text', help: 'how traces are encoded: http/protobuf or http/json' },
  { name: 'TRACING_ENABLED', path: ['tracing', 'enabled'], parse: 'boolean', help: 'traces on or off whatever the endpoint (unset: on when an OTLP endpoint is set)' },
  { name: 'OTEL_SERVICE_NAME', path: ['tracing', 'serviceName'], parse: 'text', help: 'service.name of the traces' },
  { name: 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT', path: ['tracing', 'captureContent'], parse: 'boolean', help: 'put prompts, completions, tool arguments and results on spans' },
];

/**
 * Writes every set variable into `raw` (the file's configuration) and records
 * it in `sources`, so later problems name the variable. Returns a problem for
 * each variable whose text cannot be read at all (not a number, not JSON);
 * values that read but do not fit are left to the schema.
 */
export function applyEnvironment(raw: Record<string, unknown>, env: NodeJS.ProcessEnv, schema: z.ZodType, sources: ConfigSources): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const variable of ENVIRONMENT_VARIABLES) {
    const text = env[variable.name];
    // Templates and Compose files render an unset variable as an empty one: it leaves the file's value, but where empty says "none".
    if (!variable.path || text === undefined || (text === '' && !variable.emptyMeansNone)) continue;
    const parsed = parseVariable(variable, text, () => describeSchema(schemaAt(schema, variable.path!, raw)));
    if ('problem' in parsed) {
      problems.push({ source: variable.name, message: `${variable.name} ${parsed.problem}` });
      continue;
    }
    if (variable.creates && !isPlainObject(valueAt(raw, variable.creates.path))) {
      const blocked = setPath(raw, variable.creates.path, structuredClone(variable.creates.value));
      if (blocked) problems.push(blockedProblem(variable.name, blocked, sources));
    }
    const blocked = setPath(raw, variable.path, parsed.value);
    if (blocked) {
      problems.push(blockedProblem(variable.name, blocked, sources));
      continue;
    }
    const applied: AppliedVariable = { name: variable.name, path: variable.path, text };
    if (variable.parse === 'api-keys') applied.subject = apiKeySubject(parsed.value as { tenant: unknown }[]);
    sources.recordVariable(applied);
  }
  return problems;
}

type Parsed = { value: unknown } | { problem: string };

function parseVariable(variable: EnvironmentVariable, text: string, expected: () => string | null): Parsed {
  switch (variable.parse) {
    case 'text':
      return { value: text };
    case 'integer':
      return /^\s*[+-]?\d+\s*$/.test(text) ? { value: Number(text) } : { problem: `must be ${expected() ?? 'an integer'}, got ${JSON.stringify(text)}` };
    case 'boolean': {
      const word = text.trim().toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(word)) return { value: true };
      if (['false', '0', 'no', 'off'].includes(word)) return { value: false };
      return { problem: `must be true or false, got ${JSON.stringify(text)}` };
    }
    case 'list':
      return { value: text.split(',').map((entry) => entry.trim()).filter(Boolean) };
    case 'json-array': {
      const value = parseJson(text);
      if ('problem' in value) return { problem: `must be a JSON array ${value.problem}` };
      return Array.isArray(value.value) ? value : { problem: `must be a JSON array ([…]), got ${describeJsonKind(value.value)}` };
    }
    case 'otlp-base-url':
      return { value: `${text.trim().replace(/\/+$/, '')}/v1/traces` };
    case 'api-keys': {
      const value = parseJson(text);
      const description = 'must be a JSON object mapping API keys to tenant names, {"sk-…": "team-a"}';
      if ('problem' in value) return { problem: `${description} ${value.problem}` };
      if (!isPlainObject(value.value)) return { problem: `${description}, got ${describeJsonKind(value.value)}` };
      const repeated = repeatedKey(text);
      if (repeated) return { problem: `gives the key of entry ${repeated.entry} (tenant ${JSON.stringify(repeated.tenant)}) again, first for tenant ${JSON.stringify(repeated.firstTenant)}; each key belongs to one tenant (JSON would keep the last one silently)` };
      return { value: Object.entries(value.value).map(([key, tenant]) => ({ key, tenant })) };
    }
  }
}

/** The first key `API_KEYS` gives twice (JSON.parse keeps the last): which entry (from 1), and both tenants, never the key. */
function repeatedKey(text: string): { entry: number; tenant: unknown; firstTenant: unknown } | null {
  const entries = parseTree(text)?.children ?? [];
  const tenants = new Map<string, unknown>();
  for (const [index, entry] of entries.entries()) {
    const [name, value] = entry.children ?? [];
    if (!name || typeof name.value !== 'string') continue;
    const tenant = value ? getNodeValue(value) : undefined;
    if (tenants.has(name.value)) return { entry: index + 1, tenant, firstTenant: tenants.get(name.value) };
    tenants.set(name.value, tenant);
  }
  return null;
}

/** Parses JSON without echoing its text: these variables carry secrets. */
function parseJson(text: string): { value: unknown } | { problem: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    const position = /position (\d+)/.exec((error as Error).message)?.[1];
    return { problem: position === undefined ? '(invalid JSON)' : `(invalid JSON at character ${Number(position) + 1})` };
  }
}

function describeJsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** `API_KEYS key for tenant "team-a"`: the keys are secrets, so entries are named by their tenant. */
function apiKeySubject(entries: { tenant: unknown }[]): (rest: ConfigPath) => string {
  return (rest) => {
    const [index, field] = rest;
    if (typeof index !== 'number') return `API_KEYS${formatPath(rest)}`;
    const tenant = entries[index]?.tenant;
    return field === 'key' && typeof tenant === 'string' ? `API_KEYS key for tenant ${JSON.stringify(tenant)}` : `API_KEYS entry ${index + 1}${field === undefined ? '' : ` ${String(field)}`}`;
  };
}

function blockedProblem(name: string, blocked: ConfigPath, sources: ConfigSources): ConfigProblem {
  return sources.problem(blocked, `must be an object: ${name} sets a value inside it`);
}

/** Sets a nested value, creating objects on the way; returns the path of a non-object in the way instead. */
function setPath(raw: Record<string, unknown>, path: ConfigPath, value: unknown): ConfigPath | null {
  let current: Record<string | number, unknown> = raw;
  for (let index = 0; index < path.length - 1; index++) {
    const segment = path[index]!;
    const next = current[segment];
    if (next === undefined) current[segment] = {};
    else if (!isPlainObject(next)) return path.slice(0, index + 1);
    current = current[segment] as Record<string | number, unknown>;
  }
  current[path[path.length - 1]!] = value;
  return null;
}
