import { notFound } from '../errors/gateway-error.ts';
import { PromptedStructuredOutputProvider } from './prompted-structured-output.ts';
import { NoVisionProvider } from './no-vision-provider.ts';
import type { ModelInfo, Provider, TurnRequest } from './provider.ts';
import { MemoryDeploymentHealth, type DeploymentHealth } from './routing/deployment-health.ts';
import { hasDeploymentLimits, type DeploymentLimiter, type DeploymentLimits } from './routing/deployment-limits.ts';
import { LimitedProvider } from './routing/limited-provider.ts';
import { RoutedProvider, type ContextFallback, type Deployment, type RefusedAttempt, type RoutedProviderOptions, type RoutingPolicy, type ServedBy } from './routing/routed-provider.ts';
import { TextToolCallProvider } from './text-tool-calls/text-tool-call-provider.ts';

/** How a model calls tools: through its API's own tool calling, or in its text (text-tool-calls/). */
export type ToolCallMode = 'native' | 'text';

/** How a model answers in a `text.format`: through its API's own structured output, or told in its instructions (prompted-structured-output.ts). */
export type StructuredOutputMode = 'native' | 'prompt';

/** Further model calls after a text reply whose tool calls cannot be read, unless configured. */
export const DEFAULT_TEXT_TOOL_CALL_RETRIES = 2;

export interface ModelAlias {
  /** The single provider serving the alias; unset when `deployments` lists several. */
  provider?: string;
  /** Where the alias is served, tried by weight with failover (providers/routing/). */
  deployments?: { provider: string; model?: string; weight?: number }[];
  /** The alias to retry a call on when the upstream refuses the input as too long for this one. */
  contextFallback?: string;
  /** The name the upstream knows; defaults to the alias itself. */
  model?: string;
  /** Unset: as its provider's models do. */
  toolCalls?: ToolCallMode;
  textToolCallRetries?: number;
  /** Unset: as its provider's models do. */
  structuredOutput?: StructuredOutputMode;
  vision?: boolean;
}

/** How the models a provider serves call tools and answer in a format, unless an alias says otherwise. */
export interface ProviderModelDefaults {
  toolCalls?: ToolCallMode;
  textToolCallRetries?: number;
  structuredOutput?: StructuredOutputMode;
  vision?: boolean;
}

export interface ModelRoute {
  provider: Provider;
  upstreamModel: string;
  /** For routed aliases: the deployment that served the latest model call, once one did. */
  servedBy?: () => ServedBy | null;
  /** For routed aliases: the deployment the latest model call went to, served or refused (labels, learned context windows). */
  calledBy?: () => ServedBy | null;
  /** For routed aliases: the latest model call's attempts that deployments refused and routing moved past. */
  refusedAttempts?: () => readonly RefusedAttempt[];
  /** For routed aliases: every deployment that may serve a call. */
  deployments?: readonly ServedBy[];
}

/** How routed aliases (with `deployments` or a `contextFallback`) fail over, and where cool-downs are kept. */
export interface RouterRouting {
  policy: RoutingPolicy;
  health: DeploymentHealth;
  onFailover?: RoutedProviderOptions['onFailover'];
  /** Provider entries' own outbound limits, and where they are counted; unset: none are enforced. */
  limits?: UpstreamLimits;
}

/** The outbound limits of provider entries (one API key each): routing skips a deployment at its limit. */
export interface UpstreamLimits {
  /** By provider name; a provider without an entry (or with every limit null) is unlimited. */
  byProvider: Readonly<Record<string, DeploymentLimits | null | undefined>>;
  limiter: DeploymentLimiter;
  /** The gateway's estimate of a call's input tokens, reserved under a token limit until the upstream reports its usage. */
  estimateInputTokens: (request: TurnRequest) => Promise<number>;
}

export const DEFAULT_ROUTING_POLICY: RoutingPolicy = { retries: 2, backoffMs: 250, maxRetryAfterMs: 30_000, cooldownMs: 30_000, failuresBeforeCooldown: 3 };

/**
 * Decides which provider serves a model name. Explicit aliases win; then
 * `anthropic/<model>` (prefix stripped) and `claude…` go to Anthropic when it
 * is configured, and likewise `gemini/<model>` and `gemini…` to Gemini; every other name goes, unchanged, to the default provider —
 * so with a single upstream configured, any model it serves works. A model
 * configured with `toolCalls: "text"` (its own, else its provider's) is
 * served through the text tool-call protocol in front of its provider; one
 * with `structuredOutput: "prompt"` gets its `text.format` in its
 * instructions.
 */
export class ModelRouter {
  readonly #providers: ReadonlyMap<string, Provider>;
  readonly #aliases: Readonly<Record<string, ModelAlias>>;
  readonly #defaultProvider: string | null;
  readonly #anthropic: string | null;
  readonly #gemini: string | null;
  readonly #modelDefaults: Readonly<Record<string, ProviderModelDefaults>>;
  /** The decorated fronts of the providers, one per provider and combination of settings. */
  readonly #fronts = new Map<string, Provider>();
  readonly #routing: RouterRouting;
  /** Each limited provider behind its limits, once. */
  readonly #limited = new Map<string, Provider>();

  /**
   * `anthropicProvider` names the provider that serves `claude…` and
   * `anthropic/…` models, when one is configured; `modelDefaults` says, per
   * provider name, how its models call tools and answer in a format by default.
   */
  constructor(
    providers: ReadonlyMap<string, Provider>,
    aliases: Readonly<Record<string, ModelAlias>>,
    defaultProvider: string | null,
    anthropicProvider: string | null = null,
    modelDefaults: Readonly<Record<string, ProviderModelDefaults>> = {},
    routing: RouterRouting = { policy: DEFAULT_ROUTING_POLICY, health: new MemoryDeploymentHealth() },
    /** The provider that serves `gemini…` and `gemini/…` models, when one is configured. */
    geminiProvider: string | null = null,
  ) {
    this.#routing = routing;
    this.#providers = providers;
    this.#aliases = aliases;
    this.#anthropic = anthropicProvider && providers.has(anthropicProvider) ? anthropicProvider : null;
    this.#gemini = geminiProvider && providers.has(geminiProvider) ? geminiProvider : null;
    this.#defaultProvider = defaultProvider && providers.has(defaultProvider) ? defaultProvider : null;
    this.#modelDefaults = modelDefaults;
    for (const [alias, target] of Object.entries(aliases)) {
      const named = [...(target.provider === undefined ? [] : [target.provider]), ...(target.deployments ?? []).map((deployment) => deployment.provider)];
      if (named.length === 0) throw new Error(`Model alias '${alias}' names no provider and no deployments.`);
      for (const provider of named) if (!providers.has(provider)) throw new Error(`Model alias '${alias}' names unknown provider '${provider}'.`);
      if (target.contextFallback !== undefined && !Object.hasOwn(aliases, target.contextFallback)) throw new Error(`Model alias '${alias}' falls back to unknown alias '${target.contextFallback}'.`);
    }
  }

  get providers(): Provider[] {
    return [...this.#providers.values()];
  }

  /** `contextFallback: false` resolves a fallback alias without its own fallback, so fallbacks never loop. */
  resolve(model: string, options: { contextFallback?: boolean } = {}): ModelRoute {
    // Own keys only: a model named `__proto__` or `constructor` is a name like any other.
    const alias = Object.hasOwn(this.#aliases, model) ? this.#aliases[model] : undefined;
    const fallback = options.contextFallback === false ? undefined : alias?.contextFallback;
    if (alias && (alias.deployments || fallback !== undefined)) return this.#routed(model, alias, fallback);
    if (alias) return this.#route(alias.provider!, alias.model ?? model, alias);
    // Without a provider of that kind, a prefixed name is the default upstream's own: OpenRouter's and LiteLLM's names are `anthropic/claude-…`, `google/…`.
    if (this.#anthropic && model.startsWith('anthropic/')) return this.#route(this.#anthropic, model.slice('anthropic/'.length));
    if (this.#anthropic && model.startsWith('claude')) return this.#route(this.#anthropic, model);
    if (this.#gemini && model.startsWith('gemini/')) return this.#route(this.#gemini, model.slice('gemini/'.length));
    if (this.#gemini && model.startsWith('gemini')) return this.#route(this.#gemini, model);
    // As OpenAI answers a model that does not exist: a 404 (the SDKs' NotFoundError).
    if (!this.#defaultProvider) throw notFound(noProviderServes(model), 'model_not_found', 'model');
    return this.#route(this.#defaultProvider, model);
  }

  /** A fresh routed provider per response, so it can say which deployment served each call. */
  #routed(model: string, alias: ModelAlias, fallbackAlias: string | undefined): ModelRoute {
    const targets = alias.deployments ?? [{ provider: alias.provider!, model: alias.model }];
    const deployments: Deployment[] = targets.map((target) => {
      const upstreamModel = target.model ?? alias.model ?? model;
      return { id: `${target.provider}/${upstreamModel}`, provider: this.#route(target.provider, upstreamModel, alias).provider, providerName: target.provider, upstreamModel, weight: target.weight ?? 1 };
    });
    const contextFallback =
      fallbackAlias === undefined
        ? undefined
        : (): ContextFallback => {
            const route = this.resolve(fallbackAlias, { contextFallback: false });
            return { provider: route.provider, upstreamModel: route.upstreamModel, servedBy: () => route.servedBy?.() ?? { deployment: `${route.provider.name}/${route.upstreamModel}`, providerName: route.provider.name, upstreamModel: route.upstreamModel } };
          };
    const routed = new RoutedProvider({ alias: model, deployments, ...this.#routing, ...(contextFallback && { contextFallback }) });
    return { provider: routed, upstreamModel: deployments[0]!.upstreamModel, servedBy: () => routed.servedBy, calledBy: () => routed.calledBy, refusedAttempts: () => routed.refusedAttempts, deployments: routed.deployments };
  }

  /** The named provider, behind the decorators the model (or else its provider) is configured with. */
  #route(providerName: string, upstreamModel: string, alias?: ModelAlias): ModelRoute {
    // The limits innermost: every call the fronts make (text tool-call retries too) counts.
    const provider = this.#limitedProvider(providerName);
    const defaults = Object.hasOwn(this.#modelDefaults, providerName) ? this.#modelDefaults[providerName] : undefined;
    const textToolCalls = (alias?.toolCalls ?? defaults?.toolCalls ?? 'native') === 'text';
    const promptedFormat = (alias?.structuredOutput ?? defaults?.structuredOutput ?? 'native') === 'prompt';
    const blind = (alias?.vision ?? defaults?.vision ?? true) === false;
    if (!textToolCalls && !promptedFormat && !blind) return { provider, upstreamModel };
    const retries = alias?.textToolCallRetries ?? defaults?.textToolCallRetries ?? DEFAULT_TEXT_TOOL_CALL_RETRIES;
    const key = [providerName, promptedFormat ? 'prompt' : 'native', textToolCalls ? `text:${retries}` : 'native', blind ? 'blind' : 'vision'].join('\u0000');
    let front = this.#fronts.get(key);
    if (!front) {
      // The tool protocol goes outside the format's front: its retries then pass through that front too, and the
      // format's instruction comes last in the instructions, after the tool protocol's "answer in plain text".
      front = promptedFormat ? new PromptedStructuredOutputProvider(provider) : provider;
      if (textToolCalls) front = new TextToolCallProvider(front, { retries });
      // Outermost: the images are gone before any other front renders the conversation.
      if (blind) front = new NoVisionProvider(front);
      this.#fronts.set(key, front);
    }
    return { provider: front, upstreamModel };
  }

  /** The named provider, behind its own outbound limits when it has any. */
  #limitedProvider(providerName: string): Provider {
    const provider = this.#providers.get(providerName)!;
    const upstreamLimits = this.#routing.limits;
    const limits = upstreamLimits && Object.hasOwn(upstreamLimits.byProvider, providerName) ? upstreamLimits.byProvider[providerName] : null;
    if (!upstreamLimits || !hasDeploymentLimits(limits)) return provider;
    let limited = this.#limited.get(providerName);
    if (!limited) {
      limited = new LimitedProvider(provider, { limits, limiter: upstreamLimits.limiter, estimateInputTokens: upstreamLimits.estimateInputTokens });
      this.#limited.set(providerName, limited);
    }
    return limited;
  }

  /**
   * Every model the gateway can serve: the aliases, then what each upstream
   * lists (best effort), each under a name that reaches it. A model reached
   * only by a prefix (Gemini's `gemma-…`, listed as `gemini/gemma-…`) is listed
   * so; one no name reaches (a second Chat provider's, which only an alias
   * can name) is left out: a client that picks a listed id must get the
   * upstream that listed it, not the default.
   */
  async listModels(signal: AbortSignal): Promise<ModelInfo[]> {
    const seen = new Set<string>();
    const models: ModelInfo[] = [];
    const add = (model: ModelInfo) => {
      if (seen.has(model.id)) return;
      seen.add(model.id);
      models.push(model);
    };
    for (const [alias, target] of Object.entries(this.#aliases)) add({ id: alias, owned_by: target.provider ?? target.deployments?.[0]?.provider ?? 'loopgate' });
    const providers = this.providers;
    const listed = await Promise.allSettled(providers.map((provider) => provider.listModels(signal)));
    listed.forEach((result, index) => {
      if (result.status !== 'fulfilled') return;
      for (const model of result.value) {
        const name = this.#nameReaching(model.id, providers[index]!.name);
        if (name !== null) add(name === model.id ? model : { ...model, id: name });
      }
    });
    return models;
  }

  /** The name under which `id` reaches the provider `provider`: itself, or with the provider's prefix; null when none does. */
  #nameReaching(id: string, provider: string): string | null {
    for (const name of [id, `anthropic/${id}`, `gemini/${id}`]) {
      try {
        if (this.resolve(name, { contextFallback: false }).provider.name === provider) return name;
      } catch {
        // No provider serves this name: try the next.
      }
    }
    return null;
  }
}

/** Why no provider serves a model, with what would: a prefix names a provider kind the configuration lacks. */
function noProviderServes(model: string): string {
  if (model.startsWith('anthropic/')) return `The model '${model}' needs an Anthropic provider; set ANTHROPIC_API_KEY.`;
  if (model.startsWith('gemini/')) return `The model '${model}' needs a Gemini provider; configure one with "type": "gemini".`;
  return `No provider serves the model '${model}'.`;
}
