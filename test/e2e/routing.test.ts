import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidExtension, assertValidResponse } from '../support/openresponses-schema.ts';
import { flavors, gemini, openaiResponses, type FlavorName, type ProviderFlavor } from '../support/provider-flavors.ts';
import { delta, parsePrometheusText } from '../support/prometheus-text.ts';
import { freePort } from '../support/redis.ts';
import { startReplicaPair } from '../support/replica-pair.ts';
import { ScriptedChatUpstream, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

const NAMES = ['a', 'b', 'c'] as const;
type Name = (typeof NAMES)[number];

const ROLE_CHUNK = `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`;

/**
 * How each upstream refuses before any content, in its own words: what routing must fail over from.
 * `streamedOnly`: a refusal inside a stream, which a non-streamed call cannot get.
 */
const refusalsBeforeContent: Record<FlavorName, { label: string; reply: UpstreamReply; streamedOnly?: boolean }[]> = {
  'openai-chat': [
    { label: '500', reply: { kind: 'json', status: 500, body: { error: { message: 'boom', type: 'server_error' } } } },
    { label: '503', reply: { kind: 'json', status: 503, body: { error: { message: 'unavailable', type: 'server_error' } } } },
    { label: 'connection reset', reply: { kind: 'destroy' } },
    // Servers open with a chunk holding only the role: a stream that breaks after it has shown the client nothing yet.
    { label: 'connection reset after the role chunk', reply: { kind: 'sse', pieces: [ROLE_CHUNK], destroyAfter: true }, streamedOnly: true },
    { label: 'stream ended after the role chunk', reply: { kind: 'sse', pieces: [ROLE_CHUNK] }, streamedOnly: true },
  ],
  anthropic: [
    { label: 'overloaded event before content', reply: { kind: 'sse', pieces: [`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`] } },
    { label: '529 overloaded', reply: { kind: 'json', status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } } },
    { label: '503', reply: { kind: 'json', status: 503, body: { type: 'error', error: { type: 'api_error', message: 'unavailable' } } } },
  ],
  'openai-responses': [
    { label: '500', reply: openaiResponses.refusal(500, 'The server had an error while processing your request. Sorry about that!') },
    { label: 'response.failed before content', reply: openaiResponses.failAtOnce().reply, streamedOnly: true },
    { label: 'connection reset', reply: { kind: 'destroy' } },
  ],
  gemini: [
    { label: '503 UNAVAILABLE', reply: gemini.refusal(503, 'The model is overloaded. Please try again later.') },
    { label: '500 INTERNAL', reply: gemini.refusal(500, 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting') },
    { label: 'error frame before content', reply: { kind: 'sse', pieces: [`data: ${JSON.stringify({ error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } })}\r\n\r\n`] }, streamedOnly: true },
  ],
};

/** Several upstreams of one flavor, each its own provider entry (own key), all deployments of the alias `routed`. */
class Deployments {
  readonly upstreams = new Map<Name, ScriptedChatUpstream>();
  readonly urls = new Map<Name, string>();
  /** Every upstream call in arrival order, by upstream. */
  readonly calls: Name[] = [];
  #failures: UpstreamReply[] = [];

  readonly flavor: ProviderFlavor;

  constructor(flavor: ProviderFlavor) {
    this.flavor = flavor;
  }

  async start(): Promise<void> {
    for (const name of NAMES) {
      const upstream = new ScriptedChatUpstream();
      this.upstreams.set(name, upstream);
      this.urls.set(name, await upstream.start());
      upstream.setScript((request) => this.#answer(name, request));
    }
  }

  /** The next upstream calls, whichever upstream gets them, answer these; the rest answer normally. */
  failNext(...replies: UpstreamReply[]): void {
    this.#failures = replies;
    this.calls.length = 0;
  }

  #answer(name: Name, request: RecordedRequest): UpstreamReply {
    this.calls.push(name);
    return this.#failures.shift() ?? this.flavor.render(request, { text: `served by ${name}` });
  }

  provider(name: Name, baseUrl = this.urls.get(name)!): Record<string, unknown> {
    const entry = Object.values((this.flavor.config(baseUrl) as { providers: Record<string, Record<string, unknown>> }).providers)[0]!;
    return { ...entry, apiKey: `key-${name}` };
  }

  config(models: Record<string, unknown>, routing: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      providers: Object.fromEntries(NAMES.map((name) => [name, this.provider(name)])),
      defaultProvider: 'a',
      models,
      routing: { backoffMs: 10, ...routing },
    };
  }

  async close(): Promise<void> {
    for (const upstream of this.upstreams.values()) await upstream.close();
  }
}

const routedAlias = (names: readonly Name[], weights: number[] = names.map(() => 1)) => ({ routed: { deployments: names.map((name, index) => ({ provider: name, model: `model-${name}`, weight: weights[index] })) } });

/** One request through the SDK, streamed or not: the final response, the events (streamed), and the deployment header. */
async function ask(client: OpenAI, stream: boolean, model = 'routed'): Promise<{ response: any; events: any[]; deployment: string | null }> {
  if (stream) {
    const { data, response: http } = await client.responses.create({ model, input: 'hi', stream: true }).withResponse();
    const events: any[] = [];
    for await (const event of data) events.push(event);
    const final = assertEventStreamInvariants(events);
    return { response: final, events, deployment: http.headers.get('x-loopgate-deployment') };
  }
  const { data, response: http } = await client.responses.create({ model, input: 'hi' }).withResponse();
  assertValidResponse(data);
  return { response: data, events: [], deployment: http.headers.get('x-loopgate-deployment') };
}

function textOf(response: any): string {
  return response.output.flatMap((item: any) => (item.type === 'message' ? item.content.map((part: any) => part.text ?? '') : [])).join('');
}

describe.each(flavors)('routing over deployments: $name', (flavor) => {
  const deployments = new Deployments(flavor);
  const logLines: Record<string, any>[] = [];
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    await deployments.start();
    const config = deployments.config(routedAlias(NAMES), { failuresBeforeCooldown: 100 });
    gateway = await startGateway(deployments.urls.get('a')!, { ...config, logLevel: 'info' }, {}, [], { write: (line) => logLines.push(JSON.parse(line)) });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await deployments.close();
  });

  for (const stream of [false, true]) {
    for (const refusal of refusalsBeforeContent[flavor.name].filter((candidate) => stream || !candidate.streamedOnly)) {
      it(`${refusal.label} before content → another deployment serves (stream: ${stream})`, async () => {
        deployments.failNext(refusal.reply);
        const scrape = async () => parsePrometheusText(await (await fetch(`${gateway.baseURL.replace(/\/v1$/, '')}/metrics`)).text());
        const before = await scrape();
        const { response, events, deployment } = await ask(client, stream);
        // Exactly two calls: the refusing deployment, then a different one that served.
        expect(deployments.calls).toHaveLength(2);
        const [refused, served] = deployments.calls as [Name, Name];
        expect(served).not.toBe(refused);
        expect(response.status).toBe('completed');
        expect(textOf(response)).toBe(`served by ${served}`);
        expect(deployment).toBe(`${served}/model-${served}`);
        expect(response['loopgate:deployment']).toBe(`${served}/model-${served}`);
        assertValidExtension('ResponseResourceExtensions', { 'loopgate:deployment': response['loopgate:deployment'] });
        // The upstream was sent its own model name, under its own key.
        expect(flavor.requestedModel(deployments.upstreams.get(served)!.requests.at(-1)!)).toBe(`model-${served}`);
        // The client saw nothing of the refused attempt.
        expect(events.filter((event) => event.type === 'error' || event.type === 'response.failed')).toEqual([]);
        // The log line says which deployment served; the failover was logged.
        const line = logLines.findLast((candidate) => candidate.response_id === response.id);
        expect(line).toMatchObject({ deployment: `${served}/model-${served}`, provider: served, upstream_model: `model-${served}` });
        expect(logLines.findLast((candidate) => candidate.component === 'routing')).toMatchObject({ alias: 'routed', deployment: `${refused}/model-${refused}`, provider: refused });
        // The refusal failover hid from the client still counts as the refusing provider's upstream error.
        const after = await scrape();
        expect(delta(before, after, 'loopgate_upstream_errors_total', { provider: refused })).toBe(1);
        expect(delta(before, after, 'loopgate_upstream_errors_total')).toBe(1);
      });
    }
  }

  it('a failure after the first token: the client sees response.failed and no other deployment is called', async () => {
    const midStream = flavor.failMidStream('partial');
    deployments.failNext(midStream.reply, midStream.reply, midStream.reply);
    const stream = await client.responses.create({ model: 'routed', input: 'hi', stream: true });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = assertEventStreamInvariants(events);
    expect(final.status).toBe('failed');
    expect(events.at(-1).type).toBe('response.failed');
    expect(events.some((event) => event.type === 'response.output_text.delta' && event.delta === 'partial')).toBe(true);
    expect(deployments.calls).toHaveLength(1);
  });

  it('a 400 (the request is at fault) is not retried elsewhere', async () => {
    const badRequest = flavor.refusal(400, 'temperature: out of range');
    deployments.failNext(badRequest, badRequest, badRequest);
    await expect(client.responses.create({ model: 'routed', input: 'hi' })).rejects.toMatchObject({ status: 400 });
    expect(deployments.calls).toHaveLength(1);
  });

  it('every deployment refusing: the client gets the last refusal as an OpenResponses error after retries+1 attempts', async () => {
    const refusal = refusalsBeforeContent[flavor.name][0]!.reply;
    deployments.failNext(refusal, refusal, refusal, refusal);
    const error: any = await client.responses.create({ model: 'routed', input: 'hi' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error.status).toBeGreaterThanOrEqual(500);
    expect(error.error).toMatchObject({ type: expect.any(String), code: expect.any(String), message: expect.any(String) });
    // retries: 2 → three attempts, one per deployment.
    expect(new Set(deployments.calls)).toEqual(new Set(NAMES));
    expect(deployments.calls).toHaveLength(3);
  });
});

describe.each(flavors)('cool-down: $name', (flavor) => {
  const deployments = new Deployments(flavor);
  const gateways: RunningGateway[] = [];
  afterEach(async () => {
    for (const gateway of gateways.splice(0)) await gateway.close();
  });
  beforeAll(() => deployments.start());
  afterAll(() => deployments.close());

  it('429 with retry-after → the next deployment serves, and following requests skip the cooled one', async () => {
    const gateway = await startGateway(deployments.urls.get('a')!, deployments.config(routedAlias(['a', 'b'])));
    gateways.push(gateway);
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    const rateLimited: UpstreamReply = { ...flavor.refusal(429, 'slow down'), headers: { 'retry-after': '30' } };
    deployments.failNext(rateLimited);
    const first = await ask(client, false);
    const [limited, served] = deployments.calls as [Name, Name];
    expect(deployments.calls).toHaveLength(2);
    expect(first.deployment).toBe(`${served}/model-${served}`);
    for (let index = 0; index < 6; index++) {
      const next = await ask(client, index % 2 === 1);
      expect(next.deployment).toBe(`${served}/model-${served}`);
    }
    expect(deployments.calls.filter((name) => name === limited)).toHaveLength(1);
  });

  it('connection refused: fails over, and after failuresBeforeCooldown failures the dead deployment is no longer tried', async () => {
    const lines: Record<string, any>[] = [];
    const dead = `http://127.0.0.1:${await freePort()}/v1`;
    const config = deployments.config({ routed: { deployments: [{ provider: 'dead', model: 'gone', weight: 1_000_000 }, { provider: 'b', model: 'model-b', weight: 1 }] } }, { failuresBeforeCooldown: 2 });
    (config.providers as Record<string, unknown>).dead = deployments.provider('a', dead);
    const gateway = await startGateway(deployments.urls.get('a')!, { ...config, logLevel: 'info' }, {}, [], { write: (line) => lines.push(JSON.parse(line)) });
    gateways.push(gateway);
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    deployments.failNext();
    for (let index = 0; index < 5; index++) {
      const { response, deployment } = await ask(client, index % 2 === 0);
      expect(deployment).toBe('b/model-b');
      expect(textOf(response)).toBe('served by b');
    }
    expect(deployments.calls).toEqual(['b', 'b', 'b', 'b', 'b']);
    // Two refused attempts cooled it down; the three requests after never tried it.
    const failovers = lines.filter((line) => line.component === 'routing');
    expect(failovers).toHaveLength(2);
    expect(failovers[0]).toMatchObject({ deployment: 'dead/gone', code: 'upstream_unreachable' });
  });

  it('context-length refusal → the call is retried on the configured larger-context alias', async () => {
    const config = deployments.config({ small: { provider: 'a', model: 'model-a', contextFallback: 'large' }, large: { provider: 'c', model: 'model-c-long' } });
    const gateway = await startGateway(deployments.urls.get('a')!, config);
    gateways.push(gateway);
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    for (const stream of [false, true]) {
      deployments.failNext(flavor.tooLong(9000, 8192));
      const { response, deployment } = await ask(client, stream, 'small');
      expect(deployments.calls).toEqual(['a', 'c']);
      expect(flavor.requestedModel(deployments.upstreams.get('c')!.requests.at(-1)!)).toBe('model-c-long');
      expect(response.status).toBe('completed');
      expect(response.model).toBe('small');
      expect(textOf(response)).toBe('served by c');
      expect(deployment).toBe('c/model-c-long');
    }
    // Without a fallback the refusal reaches the client as the usual 400.
    deployments.failNext(flavor.tooLong(9000, 8192));
    await expect(client.responses.create({ model: 'large', input: 'hi' })).rejects.toMatchObject({ status: 400, error: { code: 'context_length_exceeded' } });
    expect(deployments.calls).toEqual(['c']);
  });
});

/** A deployment is picked by weight before any upstream API is involved: one flavor shows it (200 requests each would add seconds per flavor). */
describe('weighted load balancing', () => {
  const deployments = new Deployments(flavors[0]!);
  beforeAll(() => deployments.start());
  afterAll(() => deployments.close());

  it('weights spread load: 3:1 over 200 requests', async () => {
    const gateway = await startGateway(deployments.urls.get('a')!, deployments.config(routedAlias(['a', 'b'], [3, 1])));
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    deployments.failNext();
    try {
      for (let index = 0; index < 200; index++) await client.responses.create({ model: 'routed', input: 'hi' });
    } finally {
      await gateway.close();
    }
    const heavy = deployments.calls.filter((name) => name === 'a').length;
    expect(deployments.calls).toHaveLength(200);
    // Expected 150 (σ ≈ 6.1); the bounds are ±5σ (a spurious failure about once in a million runs),
    // far from both an even split (100) and "always a" (200).
    expect(heavy).toBeGreaterThanOrEqual(120);
    expect(heavy).toBeLessThanOrEqual(180);
  });
});

describe('cool-down shared across two replicas on one Redis', () => {
  const deployments = new Deployments(flavors[0]!);
  beforeAll(() => deployments.start());
  afterAll(() => deployments.close());

  it('a deployment cooled down by one replica is skipped by the other', async () => {
    const pair = await startReplicaPair('redis', deployments.urls.get('a')!, deployments.config(routedAlias(['a', 'b'])));
    try {
      deployments.failNext({ kind: 'json', status: 429, headers: { 'retry-after': '30' }, body: { error: { message: 'slow down', type: 'rate_limit_error', code: 'rate_limit_exceeded' } } });
      const first = await ask(pair.clientOne, false);
      const [limited, served] = deployments.calls as [Name, Name];
      expect(first.deployment).toBe(`${served}/model-${served}`);
      for (let index = 0; index < 4; index++) {
        const other = await ask(pair.clientOther, index % 2 === 0);
        expect(other.deployment).toBe(`${served}/model-${served}`);
      }
      expect(deployments.calls.filter((name) => name === limited)).toHaveLength(1);
      expect(deployments.calls).toHaveLength(6);
    } finally {
      await pair.close();
    }
  });
});


describe('the default provider', () => {
  it('a lone provider, whatever its name, serves every model name (it was a 404 model_not_found unless named openai)', async () => {
    const upstream = new ScriptedChatUpstream();
    const url = await upstream.start();
    const gateway = await startGateway(url, { providers: { local: { type: 'openai-chat', baseUrl: url } } });
    try {
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
      const response = await client.responses.create({ model: 'qwen3:8b', input: 'hi' });
      assertValidResponse(response);
      expect(upstream.requests.at(-1)!.body.model).toBe('qwen3:8b');
    } finally {
      await gateway.close();
      await upstream.close();
    }
  });

  it('with several providers and none the default, a model none serves is a 404 model_not_found (the SDKs\' NotFoundError), as OpenAI answers it', async () => {
    const upstream = new ScriptedChatUpstream();
    const url = await upstream.start();
    const gateway = await startGateway(url, { providers: { local: { type: 'openai-chat', baseUrl: url }, other: { type: 'openai-chat', baseUrl: url } }, models: { 'qwen3:8b': { provider: 'local' } } });
    try {
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
      const error = await client.responses.create({ model: 'gpt-4o', input: 'hi' }).then(() => null, (caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ code: 'model_not_found', param: 'model', type: 'invalid_request_error' });
      expect(upstream.requests).toHaveLength(0);
    } finally {
      await gateway.close();
      await upstream.close();
    }
  });
});
