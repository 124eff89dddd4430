import { describe, expect, it } from 'vitest';
import { DEFAULT_ROUTING_POLICY, ModelRouter } from '../../src/providers/model-router.ts';
import { MemoryDeploymentHealth } from '../../src/providers/routing/deployment-health.ts';
import type { Provider } from '../../src/providers/provider.ts';
import { loadConfig } from '../../src/config/load-config.ts';

const provider = (name: string): Provider => ({ name, startTurn: async () => [], listModels: async () => [], close: async () => {} });

describe('ModelRouter', () => {
  const providers = new Map([
    ['openai', provider('openai')],
    ['anthropic', provider('anthropic')],
  ]);

  it('lists only the models a client can be served by that name: a provider\'s model another name would reach is listed so, one no name reaches is left out', async () => {
    const listing = (name: string, ids: string[]): Provider => ({ ...provider(name), listModels: async () => ids.map((id) => ({ id, owned_by: name })) });
    const router = new ModelRouter(
      new Map([
        ['openai', listing('openai', ['gpt-4.1'])],
        ['local', listing('local', ['llama-local', 'fast'])],
        ['gemini', listing('gemini', ['gemini-2.5-pro', 'gemma-3-27b-it'])],
        ['anthropic', listing('anthropic', ['claude-sonnet-4-5', 'mistral-like'])],
      ]),
      { fast: { provider: 'local', model: 'llama-local' } },
      'openai',
      'anthropic',
      {},
      { policy: DEFAULT_ROUTING_POLICY, health: new MemoryDeploymentHealth() },
      'gemini',
    );
    const listed = (await router.listModels(new AbortController().signal)).map((model) => [model.id, model.owned_by]);
    expect(listed).toEqual([
      ['fast', 'local'],
      ['gpt-4.1', 'openai'],
      ['gemini-2.5-pro', 'gemini'],
      ['gemini/gemma-3-27b-it', 'gemini'],
      ['claude-sonnet-4-5', 'anthropic'],
      ['anthropic/mistral-like', 'anthropic'],
    ]);
    // Each listed name is served by the provider that listed it.
    for (const [id, owner] of listed) expect(router.resolve(id!).provider.name).toBe(owner);
  });

  it('aliases first, then anthropic/ (stripped) and claude… to Anthropic, everything else unchanged to the default', () => {
    const router = new ModelRouter(providers, { fast: { provider: 'anthropic', model: 'claude-haiku-4-5' } }, 'openai', 'anthropic');
    const route = (model: string) => {
      const resolved = router.resolve(model);
      return [resolved.provider.name, resolved.upstreamModel];
    };
    expect(route('fast')).toEqual(['anthropic', 'claude-haiku-4-5']);
    expect(route('anthropic/claude-opus-4-1')).toEqual(['anthropic', 'claude-opus-4-1']);
    expect(route('claude-sonnet-4-5')).toEqual(['anthropic', 'claude-sonnet-4-5']);
    expect(route('gpt-4.1')).toEqual(['openai', 'gpt-4.1']);
    expect(route('meta-llama/Llama-3.1-8B-Instruct')).toEqual(['openai', 'meta-llama/Llama-3.1-8B-Instruct']);
  });

  it("without Anthropic configured, claude… and anthropic/… names go to the default unchanged (OpenRouter's names); with no default either, a 404 model_not_found naming model and what would serve it", () => {
    const router = new ModelRouter(new Map([['openai', provider('openai')]]), {}, 'openai');
    expect(router.resolve('claude-like-local-model').provider.name).toBe('openai');
    expect([router.resolve('anthropic/claude-opus-4-1').provider.name, router.resolve('anthropic/claude-opus-4-1').upstreamModel]).toEqual(['openai', 'anthropic/claude-opus-4-1']);
    const none = new ModelRouter(new Map([['openai', provider('openai')]]), {}, null);
    expect(() => none.resolve('anthropic/claude-opus-4-1')).toThrow(expect.objectContaining({ status: 404, code: 'model_not_found', param: 'model', message: expect.stringContaining('needs an Anthropic provider') }));
  });

  it('ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL configure the Anthropic provider', () => {
    const config = loadConfig({ ANTHROPIC_API_KEY: 'sk-ant-1', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9999' });
    expect(config.providers.anthropic).toMatchObject({ type: 'anthropic', apiKey: 'sk-ant-1', baseUrl: 'http://127.0.0.1:9999', defaultMaxTokens: 8192 });
  });

  it('gemini/ (stripped) and gemini… go to Gemini when configured; GEMINI_API_KEY configures it', () => {
    const router = new ModelRouter(new Map([...providers, ['gemini', provider('gemini')]]), {}, 'openai', 'anthropic', {}, undefined, 'gemini');
    expect([router.resolve('gemini/gemini-2.5-pro').provider.name, router.resolve('gemini/gemini-2.5-pro').upstreamModel]).toEqual(['gemini', 'gemini-2.5-pro']);
    expect(router.resolve('gemini-2.5-flash').provider.name).toBe('gemini');
    expect(router.resolve('claude-sonnet-4-5').provider.name).toBe('anthropic');
    const without = new ModelRouter(providers, {}, 'openai', 'anthropic');
    expect(without.resolve('gemini-like-local-model').provider.name).toBe('openai');
    expect([without.resolve('gemini/gemini-2.5-pro').provider.name, without.resolve('gemini/gemini-2.5-pro').upstreamModel]).toEqual(['openai', 'gemini/gemini-2.5-pro']);
    const config = loadConfig({ GEMINI_API_KEY: 'AIza-1' });
    expect(config.providers.gemini).toMatchObject({ type: 'gemini', apiKey: 'AIza-1', baseUrl: 'https://generativelanguage.googleapis.com', apiVersion: 'v1beta' });
  });
});
