import { invalidRequest } from '../errors/gateway-error.ts';
import type { ModelInfo, Provider } from './provider.ts';
import { TextToolCallProvider } from './text-tool-calls/text-tool-call-provider.ts';

/** How a model calls tools: through its API's own tool calling, or in its text (text-tool-calls/). */
export type ToolCallMode = 'native' | 'text';

/** Further model calls after a text reply whose tool calls cannot be read, unless configured. */
export const DEFAULT_TEXT_TOOL_CALL_RETRIES = 2;

export interface ModelAlias {
  provider: string;
  /** The name the upstream knows; defaults to the alias itself. */
  model?: string;
  /** Unset: as its provider's models do. */
  toolCalls?: ToolCallMode;
  textToolCallRetries?: number;
}

/** How the models a provider serves call tools, unless an alias says otherwise. */
export interface ProviderToolCalls {
  toolCalls?: ToolCallMode;
  textToolCallRetries?: number;
}

export interface ModelRoute {
  provider: Provider;
  upstreamModel: string;
}

/**
 * Decides which provider serves a model name. Explicit aliases win; then
 * `anthropic/<model>` (prefix stripped) and `claude…` go to Anthropic when it
 * is configured; every other name goes, unchanged, to the default provider —
 * so with a single upstream configured, any model it serves works. A model
 * configured with `toolCalls: "text"` (its own, else its provider's) is
 * served through the text tool-call protocol in front of its provider.
 */
export class ModelRouter {
  readonly #providers: ReadonlyMap<string, Provider>;
  readonly #aliases: Readonly<Record<string, ModelAlias>>;
  readonly #defaultProvider: string | null;
  readonly #anthropic: string | null;
  readonly #toolCalls: Readonly<Record<string, ProviderToolCalls>>;
  /** Text tool-call fronts of the providers, one per provider and retry limit. */
  readonly #textToolCallProviders = new Map<string, TextToolCallProvider>();

  /**
   * `anthropicProvider` names the provider that serves `claude…` and
   * `anthropic/…` models, when one is configured; `toolCalls` says, per
   * provider name, how its models call tools by default.
   */
  constructor(
    providers: ReadonlyMap<string, Provider>,
    aliases: Readonly<Record<string, ModelAlias>>,
    defaultProvider: string | null,
    anthropicProvider: string | null = null,
    toolCalls: Readonly<Record<string, ProviderToolCalls>> = {},
  ) {
    this.#providers = providers;
    this.#aliases = aliases;
    this.#anthropic = anthropicProvider && providers.has(anthropicProvider) ? anthropicProvider : null;
    this.#defaultProvider = defaultProvider && providers.has(defaultProvider) ? defaultProvider : null;
    this.#toolCalls = toolCalls;
    for (const [alias, target] of Object.entries(aliases)) {
      if (!providers.has(target.provider)) throw new Error(`Model alias '${alias}' names unknown provider '${target.provider}'.`);
    }
  }

  get providers(): Provider[] {
    return [...this.#providers.values()];
  }

  resolve(model: string): ModelRoute {
    // Own keys only: a model named `__proto__` or `constructor` is a name like any other.
    const alias = Object.hasOwn(this.#aliases, model) ? this.#aliases[model] : undefined;
    if (alias) return this.#route(alias.provider, alias.model ?? model, alias);
    if (model.startsWith('anthropic/')) {
      if (!this.#anthropic) throw invalidRequest(`The model '${model}' needs an Anthropic provider; set ANTHROPIC_API_KEY.`, 'model', 'model_not_found');
      return this.#route(this.#anthropic, model.slice('anthropic/'.length));
    }
    if (this.#anthropic && model.startsWith('claude')) return this.#route(this.#anthropic, model);
    if (!this.#defaultProvider) throw invalidRequest(`No provider serves the model '${model}'.`, 'model', 'model_not_found');
    return this.#route(this.#defaultProvider, model);
  }

  /** The named provider, behind the text tool-call protocol when the model (or else its provider) is configured so. */
  #route(providerName: string, upstreamModel: string, alias?: ModelAlias): ModelRoute {
    const provider = this.#providers.get(providerName)!;
    const defaults = Object.hasOwn(this.#toolCalls, providerName) ? this.#toolCalls[providerName] : undefined;
    if ((alias?.toolCalls ?? defaults?.toolCalls ?? 'native') === 'native') return { provider, upstreamModel };
    const retries = alias?.textToolCallRetries ?? defaults?.textToolCallRetries ?? DEFAULT_TEXT_TOOL_CALL_RETRIES;
    const key = `${providerName}\u0000${retries}`;
    let front = this.#textToolCallProviders.get(key);
    if (!front) {
      front = new TextToolCallProvider(provider, { retries });
      this.#textToolCallProviders.set(key, front);
    }
    return { provider: front, upstreamModel };
  }

  /** Every model the gateway can serve: the aliases, then what each upstream lists (best effort). */
  async listModels(signal: AbortSignal): Promise<ModelInfo[]> {
    const seen = new Set<string>();
    const models: ModelInfo[] = [];
    const add = (model: ModelInfo) => {
      if (seen.has(model.id)) return;
      seen.add(model.id);
      models.push(model);
    };
    for (const [alias, target] of Object.entries(this.#aliases)) add({ id: alias, owned_by: target.provider });
    const listed = await Promise.allSettled(this.providers.map((provider) => provider.listModels(signal)));
    for (const result of listed) if (result.status === 'fulfilled') result.value.forEach(add);
    return models;
  }
}
