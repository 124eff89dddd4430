import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { MockExecutor } from '../support/scripted-provider.ts';
import { assertValidExtension, assertValidResponse } from '../support/openresponses-schema.ts';
import { anthropic, openaiChat, type ProviderFlavor } from '../support/provider-flavors.ts';
import { delta, parsePrometheusText, type Scrape } from '../support/prometheus-text.ts';
import { ScriptedChatUpstream, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/**
 * A routed alias is labelled by the deployment each call went to, not by its
 * first deployment: metrics, the context windows truncation learns, and which
 * upstream counts input tokens.
 */
class TwoDeployments {
  readonly upstreams = { a: new ScriptedChatUpstream(), b: new ScriptedChatUpstream() };
  readonly urls = { a: '', b: '' };
  readonly calls: ('a' | 'b')[] = [];
  script: Record<'a' | 'b', (request: RecordedRequest) => UpstreamReply>;
  readonly flavor: ProviderFlavor;

  constructor(flavor: ProviderFlavor) {
    this.flavor = flavor;
    this.script = { a: (request) => flavor.render(request, { text: 'from a' }), b: (request) => flavor.render(request, { text: 'from b' }) };
  }

  async start(): Promise<void> {
    for (const name of ['a', 'b'] as const) {
      this.urls[name] = await this.upstreams[name].start();
      this.upstreams[name].setScript((request) => {
        this.calls.push(name);
        return this.script[name](request);
      });
    }
  }

  config(extra: Record<string, unknown> = {}): Record<string, unknown> {
    const entry = (name: 'a' | 'b') => ({ ...Object.values((this.flavor.config(this.urls[name]) as { providers: Record<string, object> }).providers)[0]!, apiKey: `key-${name}` });
    return {
      providers: { a: entry('a'), b: entry('b') },
      defaultProvider: 'a',
      models: { routed: { deployments: [{ provider: 'a', model: 'model-a', weight: 1_000 }, { provider: 'b', model: 'model-b', weight: 1 }] }, ...(extra.models as object) },
      routing: { backoffMs: 10, ...(extra.routing as object) },
    };
  }

  async close(): Promise<void> {
    await this.upstreams.a.close();
    await this.upstreams.b.close();
  }
}

const unavailable: UpstreamReply = { kind: 'json', status: 503, body: { error: { message: 'unavailable', type: 'server_error' } } };

describe('metrics of a routed alias name the deployment that served', () => {
  const deployments = new TwoDeployments(openaiChat);
  let gateway: RunningGateway;
  let client: OpenAI;
  const scrape = async (): Promise<Scrape> => parsePrometheusText(await (await fetch(`${gateway.origin}/metrics`)).text());

  beforeAll(async () => {
    await deployments.start();
    // One failure cools a deployment down for the whole test.
    gateway = await startGateway(deployments.urls.a, deployments.config({ routing: { failuresBeforeCooldown: 1, cooldownMs: 600_000 } }));
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await deployments.close();
  });

  it('served by b after a failed over: responses and tokens are b\'s; then b\'s refusal is b\'s upstream error', async () => {
    deployments.script.a = () => unavailable;
    let before = await scrape();
    // a (weighted 1000:1) is nearly always drawn first; until it has failed once, b may serve alone.
    while (!deployments.calls.includes('a')) expect((await client.responses.create({ model: 'routed', input: 'hi' })).output_text).toBe('from b');
    let after = await scrape();
    const served = delta(before, after, 'loopgate_responses_total', { model: 'routed', provider: 'b', status: 'completed' });
    expect(served).toBeGreaterThanOrEqual(1);
    expect(delta(before, after, 'loopgate_responses_total', { model: 'routed', provider: 'a' })).toBe(0);
    expect(delta(before, after, 'loopgate_tokens_total', { model: 'routed', provider: 'b', type: 'input' })).toBe(10 * served);
    expect(delta(before, after, 'loopgate_tokens_total', { model: 'routed', provider: 'a' })).toBe(0);

    // a is cooling down: only b is asked, and its refusal is counted as b's.
    deployments.script.b = () => ({ kind: 'json', status: 400, body: { error: { message: 'temperature: out of range', type: 'invalid_request_error', param: 'temperature', code: null } } });
    deployments.calls.length = 0;
    before = await scrape();
    await expect(client.responses.create({ model: 'routed', input: 'hi' })).rejects.toMatchObject({ status: 400 });
    after = await scrape();
    expect(deployments.calls).toEqual(['b']);
    expect(delta(before, after, 'loopgate_upstream_errors_total', { provider: 'b' })).toBe(1);
    expect(delta(before, after, 'loopgate_upstream_errors_total', { provider: 'a' })).toBe(0);
    expect(delta(before, after, 'loopgate_responses_total', { model: 'routed', provider: 'b', status: 'failed' })).toBe(1);
  });
});

describe("a routed response whose calls were served by two deployments counts each call's tokens under its own", () => {
  const deployments = new TwoDeployments(openaiChat);
  const lookup = new MockExecutor(['lookup']);
  let gateway: RunningGateway;
  let client: OpenAI;
  const scrape = async (): Promise<Scrape> => parsePrometheusText(await (await fetch(`${gateway.origin}/metrics`)).text());

  beforeAll(async () => {
    await deployments.start();
    gateway = await startGateway(deployments.urls.a, deployments.config({ routing: { failuresBeforeCooldown: 100 } }), {}, [lookup]);
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await deployments.close();
  });

  it('turn 1 on a (a tool call), turn 2 failed over to b: a and b each have their own call\'s tokens', async () => {
    // a calls the server-side tool, then is unavailable; b answers.
    deployments.script.a = (request) => (openaiChat.seen(request).some((seen) => seen.kind === 'result') ? unavailable : openaiChat.render(request, { calls: [{ id: 'c1', name: 'lookup', args: {} }], usage: { input: 11, output: 3 } }));
    deployments.script.b = (request) => openaiChat.render(request, { text: 'from b', usage: { input: 29, output: 7 } });
    const before = await scrape();
    let response = await client.responses.create({ model: 'routed', input: 'hi' });
    // b (weighted 1:1000) may be drawn first: then it served both calls; go again until a took the first.
    while (deployments.calls[0] !== 'a' || !deployments.calls.includes('b')) {
      deployments.calls.length = 0;
      response = await client.responses.create({ model: 'routed', input: 'hi' });
    }
    expect(response.output_text).toBe('from b');
    expect(response.usage).toMatchObject({ input_tokens: 40, output_tokens: 10 });
    const after = await scrape();
    const tokens = (provider: string, type: string) => delta(before, after, 'loopgate_tokens_total', { model: 'routed', provider, type });
    // The last response's first call went to a, its second to b (an earlier one b may have served alone, with 29).
    expect(tokens('a', 'input')).toBeGreaterThanOrEqual(11);
    expect(tokens('a', 'output')).toBeGreaterThanOrEqual(3);
    expect(tokens('b', 'input')).toBeGreaterThanOrEqual(29);
    expect(tokens('a', 'input') % 11).toBe(0);
    expect(tokens('b', 'input') % 29).toBe(0);
  });
});

describe('a context window learned through a routed alias is the deployment\'s that refused', () => {
  const deployments = new TwoDeployments(openaiChat);
  let gateway: RunningGateway;
  let client: OpenAI;
  const WINDOW = 120;
  const input = Array.from({ length: 10 }, (_, index) => ({ role: 'user' as const, content: `Message number ${index}: ${'words that take up room '.repeat(4)}` }));

  beforeAll(async () => {
    await deployments.start();
    gateway = await startGateway(deployments.urls.a, deployments.config({ routing: { failuresBeforeCooldown: 100 }, models: { 'direct-a': { provider: 'a', model: 'model-a' }, 'direct-b': { provider: 'b', model: 'model-b' } } }));
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await deployments.close();
  });

  it('b refuses the input as too long: b/model-b learns the window, a/model-a does not', async () => {
    let refused = false;
    deployments.script.a = () => unavailable;
    deployments.script.b = (request) => {
      if (refused) return openaiChat.render(request, { text: 'from b' });
      refused = true;
      return { kind: 'json', status: 400, body: { error: { message: `This model's maximum context length is ${WINDOW} tokens.`, type: 'invalid_request_error', code: 'context_length_exceeded', param: 'messages' } } };
    };
    const first = await client.responses.create({ model: 'routed', input, truncation: 'auto' });
    assertValidResponse(first);
    assertValidExtension('TruncationReport', (first as unknown as Record<string, unknown>)['loopgate:truncation']);
    expect(first.output_text).toBe('from b');
    expect((first as unknown as Record<string, unknown>)['loopgate:truncation']).toMatchObject({ context_window: WINDOW, window_source: 'learned' });

    deployments.script.a = (request) => openaiChat.render(request, { text: 'from a' });
    const onB = await client.responses.create({ model: 'direct-b', input, truncation: 'auto' });
    expect((onB as unknown as Record<string, unknown>)['loopgate:truncation']).toMatchObject({ context_window: WINDOW, window_source: 'learned' });
    const onA = await client.responses.create({ model: 'direct-a', input, truncation: 'auto' });
    expect(onA.output_text).toBe('from a');
    expect((onA as unknown as Record<string, unknown>)['loopgate:truncation']).toBeUndefined();
  });
});

describe('input tokens of a routed alias are counted by a deployment not cooling down', () => {
  const deployments = new TwoDeployments(anthropic);
  const gateways: RunningGateway[] = [];
  const isCount = (request: RecordedRequest) => request.path.endsWith('/count_tokens');
  beforeAll(() => deployments.start());
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.close();
  });
  afterAll(() => deployments.close());

  async function client(config: Record<string, unknown>): Promise<OpenAI> {
    const gateway = await startGateway(deployments.urls.a, config);
    gateways.push(gateway);
    return new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  }

  it('a cooled down: b counts', async () => {
    deployments.script.a = (request) => (isCount(request) ? { kind: 'json', body: { input_tokens: 111 } } : unavailable);
    deployments.script.b = (request) => (isCount(request) ? { kind: 'json', body: { input_tokens: 222 } } : anthropic.render(request, { text: 'from b' }));
    const routed = await client(deployments.config({ routing: { failuresBeforeCooldown: 1, cooldownMs: 600_000 } }));
    while (!deployments.calls.includes('a')) await routed.responses.create({ model: 'routed', input: 'hi' });
    deployments.calls.length = 0;
    expect(await routed.responses.inputTokens.count({ model: 'routed', input: 'hi' })).toMatchObject({ input_tokens: 222 });
    expect(deployments.calls).toEqual(['b']);
  });

  it('a refuses the count as an upstream in trouble: b counts', async () => {
    deployments.script.a = (request) => (isCount(request) ? { kind: 'json', status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } } : anthropic.render(request, { text: 'from a' }));
    const routed = await client(deployments.config({ routing: { failuresBeforeCooldown: 100 } }));
    deployments.calls.length = 0;
    expect(await routed.responses.inputTokens.count({ model: 'routed', input: 'hi' })).toMatchObject({ input_tokens: 222 });
    // b answered the count, after a's refusal when a was drawn first.
    expect(deployments.calls.at(-1)).toBe('b');
    expect(deployments.calls.filter((name) => name === 'b')).toHaveLength(1);
  });
});
