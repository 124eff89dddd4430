import { describe, expect, it } from 'vitest';
import { GatewayConfig } from '../../src/config/load-config.ts';
import { measuresTokensUpFront } from '../../src/config/measures-tokens.ts';
import { tokenCounterLoading } from '../../src/engine/token-estimate.ts';
import { buildApp } from '../../src/http/build-app.ts';

const config = (extra: Record<string, unknown>) => GatewayConfig.parse({ logLevel: 'silent', providers: { openai: { type: 'openai-chat', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k' } }, ...extra });

/**
 * Loading the tokenizer stalls the event loop for up to seconds on a small
 * machine: on the first token-limited request, that stall timed out the
 * Redis commands in flight, and the limiter let the burst through unmetered.
 */
describe('the tokenizer is loaded at start-up when token limits measure requests', () => {
  it('a token limit of the gateway, of an API key, or of an upstream measures requests up front; request and concurrency limits do not', () => {
    expect(measuresTokensUpFront(config({}))).toBe(false);
    expect(measuresTokensUpFront(config({ limits: { requestsPerMinute: 10, concurrentResponses: 2 } }))).toBe(false);
    expect(measuresTokensUpFront(config({ limits: { tokensPerDay: 1_000 } }))).toBe(true);
    expect(measuresTokensUpFront(config({ auth: { apiKeys: [{ key: 'sk-tenant-a', tenant: 'a', limits: { tokensPerMinute: 1_000 } }] } }))).toBe(true);
    expect(measuresTokensUpFront(config({ providers: { openai: { type: 'openai-chat', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'k', limits: { tokensPerMinute: 5_000 } } } }))).toBe(true);
  });

  it('the app is built with the tokenizer loaded only when they do', async () => {
    const plain = await buildApp({ config: config({}) });
    expect(tokenCounterLoading()).toBe(false);
    await plain.close();
    const limited = await buildApp({ config: config({ limits: { tokensPerMinute: 1_000 } }) });
    expect(tokenCounterLoading()).toBe(true);
    await limited.close();
  });
});
