import { isPlainObject, type ConfigProblem } from './config-problem.ts';
import type { ConfigSources } from './config-sources.ts';
import { endpointPathHint, missingApiPathHint } from './url-schemas.ts';
import { effectiveDefaultProvider } from './default-provider.ts';
import { servedByGateway } from './gateway-paths.ts';

/**
 * Checks what one setting says about another, on the raw configuration (so it
 * runs even when other values are invalid): names of providers that do not
 * exist, MCP server names used twice, tool policies for tenants no API key
 * belongs to, base URLs that probably lack `/v1` or end in the path the provider adds itself, a metrics port that is the main one.
 */
export function checkReferences(raw: Record<string, unknown>, sources: ConfigSources): { problems: ConfigProblem[]; warnings: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const warnings: ConfigProblem[] = [];
  const providers = isPlainObject(raw.providers) ? raw.providers : {};
  const names = Object.keys(providers);
  const unknownProvider = (name: string) => `names the provider ${JSON.stringify(name)}, which is not configured (configured: ${names.length > 0 ? names.join(', ') : 'none'})`;

  // Only an explicit choice is checked: the built-in default ("openai") falls back to Anthropic when only Anthropic is configured.
  if (typeof raw.defaultProvider === 'string' && !Object.hasOwn(providers, raw.defaultProvider)) {
    problems.push(sources.problem(['defaultProvider'], unknownProvider(raw.defaultProvider)));
  }
  if (isPlainObject(raw.models)) {
    for (const [alias, target] of Object.entries(raw.models)) {
      if (isPlainObject(target) && typeof target.provider === 'string' && !Object.hasOwn(providers, target.provider)) {
        problems.push(sources.problem(['models', alias, 'provider'], unknownProvider(target.provider)));
      }
      if (isPlainObject(target) && Array.isArray(target.deployments)) {
        target.deployments.forEach((deployment, index) => {
          if (isPlainObject(deployment) && typeof deployment.provider === 'string' && !Object.hasOwn(providers, deployment.provider)) {
            problems.push(sources.problem(['models', alias, 'deployments', index, 'provider'], unknownProvider(deployment.provider)));
          }
        });
      }
      if (isPlainObject(target) && typeof target.contextFallback === 'string' && !Object.hasOwn(raw.models, target.contextFallback)) {
        problems.push(sources.problem(['models', alias, 'contextFallback'], `names the model ${JSON.stringify(target.contextFallback)}, which is not configured in models`));
      }
    }
  }

  const servers = isPlainObject(raw.mcp) && Array.isArray(raw.mcp.servers) ? raw.mcp.servers : [];
  const firstIndexByName = new Map<string, number>();
  servers.forEach((server, index) => {
    if (!isPlainObject(server) || typeof server.name !== 'string') return;
    const first = firstIndexByName.get(server.name);
    if (first === undefined) firstIndexByName.set(server.name, index);
    else problems.push(sources.problem(['mcp', 'servers', index, 'name'], `repeats the name ${JSON.stringify(server.name)} of entry ${first}; each server needs its own (its tools are offered as <name>__<tool>)`));
  });

  const loop = isPlainObject(raw.loop) ? raw.loop : {};
  const validator = isPlainObject(loop.outputValidation) && isPlainObject(loop.outputValidation.validator) ? loop.outputValidation.validator : null;
  if (validator?.type === 'mcp' && typeof validator.tool === 'string') {
    const server = validator.tool.split('__')[0]!;
    if (!firstIndexByName.has(server)) {
      problems.push(sources.problem(['loop', 'outputValidation', 'validator', 'tool'], `names the MCP server ${JSON.stringify(server)}, which is not configured in mcp.servers (configured: ${[...firstIndexByName.keys()].join(', ') || 'none'})`));
    }
  }

  const apiKeys = isPlainObject(raw.auth) && Array.isArray(raw.auth.apiKeys) ? raw.auth.apiKeys : [];
  // One key under two entries: the first wins, so the other's tenant and rights never apply (a copy-paste slip).
  const firstEntryByKey = new Map<string, number>();
  apiKeys.forEach((entry, index) => {
    if (!isPlainObject(entry) || typeof entry.key !== 'string') return;
    const first = firstEntryByKey.get(entry.key);
    if (first === undefined) firstEntryByKey.set(entry.key, index);
    else problems.push(sources.problem(['auth', 'apiKeys', index, 'key'], `is the key of entry ${first} too; each entry needs its own key (requests with it would belong to entry ${first}'s tenant only)`, { at: 'key' }));
  });

  // A policy for a tenant no key belongs to protects nobody: most likely a misspelt name, which would leave the real tenant unrestricted.
  const keyTenants = new Set(apiKeys.flatMap((entry) => (isPlainObject(entry) && typeof entry.tenant === 'string' ? [entry.tenant] : [])));
  // Without keys every request belongs to the one tenant "default" (src/http/authenticate.ts).
  const tenantsInUse = apiKeys.length > 0 ? keyTenants : new Set(['default']);
  for (const tenant of Object.keys(isPlainObject(raw.tenants) ? raw.tenants : {})) {
    if (tenant === '*' || tenantsInUse.has(tenant)) continue;
    const known = apiKeys.length > 0 ? `tenants with API keys: ${[...keyTenants].join(', ')}` : 'no API keys are configured, so every request is tenant "default"';
    problems.push(sources.problem(['tenants', tenant], `is a policy for a tenant no API key belongs to (${known}); use "*" for every tenant`, { at: 'key' }));
  }

  // A port of its own for /metrics cannot be the main one (0 asks for any free port, which never is).
  const metricsPort = isPlainObject(raw.metrics) ? raw.metrics.port : null;
  const mainPort = isPlainObject(raw.server) ? raw.server.port : null;
  if (typeof metricsPort === 'number' && metricsPort !== 0 && metricsPort === mainPort) {
    problems.push(sources.problem(['metrics', 'port'], `is server.port (${metricsPort}) too; leave it null to serve /metrics on the main port, or pick another port`));
  }

  const metricsPath = isPlainObject(raw.metrics) ? raw.metrics.path : undefined;
  if ((metricsPort === null || metricsPort === undefined) && typeof metricsPath === 'string' && servedByGateway(metricsPath)) {
    problems.push(sources.problem(['metrics', 'path'], `is a path the gateway serves itself; on the main port /metrics needs one of its own (such as /metrics), or a metrics.port of its own`, { value: metricsPath }));
  }

  for (const [name, provider] of Object.entries(providers)) {
    if (!isPlainObject(provider) || typeof provider.type !== 'string') continue;
    // The hosted APIs refuse every call without a key: said at start-up, not at the first request (a 502 upstream_auth_failed).
    const host = hostOf(typeof provider.baseUrl === 'string' ? provider.baseUrl : DEFAULT_BASE_URLS[provider.type]);
    if (host && KEYED_HOSTS.test(host) && (provider.apiKey === undefined || provider.apiKey === null || provider.apiKey === '')) {
      warnings.push(sources.problem(['providers', name], `has no apiKey, and ${host} refuses every call without one; set its apiKey (or the provider's API key variable)`, { at: 'key' }));
    }
    if (typeof provider.baseUrl !== 'string') continue;
    const openAIWire = provider.type === 'openai-chat' || provider.type === 'openai-responses';
    const hint = endpointPathHint(provider.type, provider.baseUrl) ?? (openAIWire ? missingApiPathHint(provider.baseUrl) : null);
    if (hint) warnings.push(sources.problem(['providers', name, 'baseUrl'], hint));
  }
  if (names.length === 0) {
    warnings.push({ source: sources.fileName, message: 'no provider is configured: set OPENAI_BASE_URL or ANTHROPIC_API_KEY, or add one under "providers"; /readyz reports not ready until then' });
  } else if (effectiveDefaultProvider(typeof raw.defaultProvider === 'string' ? raw.defaultProvider : 'openai', providers) === null) {
    warnings.push(sources.problem(['providers'], `has no default: model names not in "models" will be refused (404 model_not_found); set defaultProvider (DEFAULT_PROVIDER) to one of ${names.join(', ')}`, { at: 'key' }));
    // Then the model of every request that names none would be refused too.
    if (typeof raw.defaultModel === 'string' && !(isPlainObject(raw.models) && Object.hasOwn(raw.models, raw.defaultModel))) {
      problems.push(sources.problem(['defaultModel'], `names the model ${JSON.stringify(raw.defaultModel)}, which no provider serves: it is not in "models" and there is no default provider`));
    }
  }
  return { problems, warnings };
}

/** Hosted model APIs that take no call without a key (self-hosted servers often need none). */
const KEYED_HOSTS = /(^|\.)(api\.openai\.com|api\.anthropic\.com|generativelanguage\.googleapis\.com|openai\.azure\.com|openrouter\.ai|api\.groq\.com|api\.deepseek\.com)$/i;

/** Where a provider type goes when its baseUrl is not set (provider-config.ts). */
const DEFAULT_BASE_URLS: Record<string, string | undefined> = { 'openai-responses': 'https://api.openai.com/v1', anthropic: 'https://api.anthropic.com', gemini: 'https://generativelanguage.googleapis.com' };

function hostOf(url: string | undefined): string | null {
  return url ? (URL.parse(url)?.hostname ?? null) : null;
}
