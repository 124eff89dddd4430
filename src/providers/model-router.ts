import { invalidRequest } from '../errors/gateway-error.ts';
import type { ModelInfo, Provider } from './provider.ts';

export interface ModelAlias {
  provider: string;
  /** The name the upstream knows; defaults to the alias itself. */
  model?: string;
}

export interface ModelRoute {
  provider: Provider;
  upstreamModel: string;
}

/**
 * Decides which provider serves a model name. Explicit aliases win; then
 * `anthropic/<model>` (prefix stripped) and `claude…` go to Anthropic when it
 * is configured; every other name goes, unchanged, to the default provider —
 * so with a single upstream configured, any model it serves works.
 */
export class ModelRouter {
  readonly #providers: ReadonlyMap<string, Provider>;
  readonly #aliases: Readonly<Record<string, ModelAlias>>;
  readonly #defaultProvider: Provider | null;
  readonly #anthropic: Provider | null;

  /** `anthropicProvider` names the provider that serves `claude…` and `anthropic/…` models, when one is configured. */
  constructor(providers: ReadonlyMap<string, Provider>, aliases: Readonly<Record<string, ModelAlias>>, defaultProvider: string | null, anthropicProvider: string | null = null) {
    this.#providers = providers;
    this.#aliases = aliases;
    this.#anthropic = anthropicProvider ? (providers.get(anthropicProvider) ?? null) : null;
    this.#defaultProvider = defaultProvider ? (providers.get(defaultProvider) ?? null) : null;
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
    if (alias) return { provider: this.#providers.get(alias.provider)!, upstreamModel: alias.model ?? model };
    if (model.startsWith('anthropic/')) {
      if (!this.#anthropic) throw invalidRequest(`The model '${model}' needs an Anthropic provider; set ANTHROPIC_API_KEY.`, 'model', 'model_not_found');
      return { provider: this.#anthropic, upstreamModel: model.slice('anthropic/'.length) };
    }
    if (this.#anthropic && model.startsWith('claude')) return { provider: this.#anthropic, upstreamModel: model };
    if (!this.#defaultProvider) throw invalidRequest(`No provider serves the model '${model}'.`, 'model', 'model_not_found');
    return { provider: this.#defaultProvider, upstreamModel: model };
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
