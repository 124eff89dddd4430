import type { GatewayConfig } from '../config/load-config.ts';
import { AnthropicProvider } from './anthropic/anthropic-provider.ts';
import { GeminiProvider } from './gemini/gemini-provider.ts';
import { OpenAIChatProvider } from './openai-chat/openai-chat-provider.ts';
import { OpenAIResponsesProvider } from './openai-responses/openai-responses-provider.ts';
import type { Provider } from './provider.ts';
import type { ProviderLogger } from './upstream-errors.ts';

/** Instantiates the configured providers by name. */
export function createProviders(config: GatewayConfig, log?: ProviderLogger): Map<string, Provider> {
  const providers = new Map<string, Provider>();
  for (const [name, provider] of Object.entries(config.providers)) {
    switch (provider.type) {
      case 'openai-chat':
        providers.set(name, new OpenAIChatProvider({ name, ...provider, ...(log && { log }) }));
        break;
      case 'openai-responses':
        providers.set(name, new OpenAIResponsesProvider({ name, ...provider, ...(log && { log }) }));
        break;
      case 'anthropic':
        providers.set(name, new AnthropicProvider({ name, ...provider, ...(log && { log }) }));
        break;
      case 'gemini':
        providers.set(name, new GeminiProvider({ name, ...provider, ...(log && { log }) }));
        break;
    }
  }
  return providers;
}
