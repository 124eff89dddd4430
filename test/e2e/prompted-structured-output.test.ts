import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { z } from 'zod';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidExtension, assertValidResponse } from '../support/openresponses-schema.ts';
import { flavors, type ModelTurn, type ProviderFlavor, type Seen } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/**
 * Models without native structured output (`structuredOutput: "prompt"`),
 * with output validation on. The scripted upstream has no structured output:
 * like such a server, it answers 400 to any request carrying a format
 * (`response_format`, `output_config`, `text.format`, `responseMimeType`) — so every passing test also proves
 * none was sent. The model is scripted from what it has seen: it only gets
 * the format right after the gateway's validation feedback.
 */

const WEATHER_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' }, temp: { type: 'number' } },
  required: ['city', 'temp'],
  additionalProperties: false,
};
const weatherFormat = { type: 'json_schema' as const, name: 'weather', description: 'The weather in one city.', schema: WEATHER_SCHEMA, strict: true };
const Weather = z.object({ city: z.string(), temp: z.number() });

/** The upstream's own model names: one model prompted for formats only, one for tool calls too. */
const PROMPTED = 'upstream-prompted';
const PROMPTED_WITH_TEXT_TOOLS = 'upstream-prompted-text-tools';

/** A server without structured output refuses a format, and the text-tool model's server refuses tools as well. */
function refusal(flavor: ProviderFlavor, request: RecordedRequest): UpstreamReply | null {
  const format = flavor.format(request) !== null;
  const tools = flavor.requestedModel(request) === PROMPTED_WITH_TEXT_TOOLS && (flavor.mentionsTools(request) || flavor.seen(request).some((seen) => seen.kind === 'call' || seen.kind === 'result'));
  if (!format && !tools) return null;
  return flavor.refusal(400, format ? 'This model does not support structured output.' : 'This model does not support tools.');
}

const systemOf = (seen: Seen[]) => seen.filter((entry) => entry.kind === 'system').map((entry) => entry.text).join('\n');
/** The gateway's validation feedback the model was shown, if any. */
const feedbackIn = (seen: Seen[]) => seen.flatMap((entry) => (entry.kind === 'user' && entry.text.startsWith('Your answer was not accepted') ? [entry.text] : [])).at(0);
const resultsIn = (seen: Seen[]) => seen.flatMap((entry) => (entry.kind === 'user' ? [...entry.text.matchAll(/Result of tool call \w+ \([\w-]+\):\n(.*)/g)].map((match) => match[1]!) : []));

describe.each(flavors)('prompted structured output over $name, to an upstream without structured output', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  let client: OpenAI;
  let refusals = 0;
  let model: (seen: Seen[], request: RecordedRequest) => ModelTurn = () => ({ text: 'unscripted' });

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    upstream.setScript((request) => {
      const refused = refusal(flavor, request);
      if (refused) {
        refusals++;
        return refused;
      }
      return flavor.render(request, model(flavor.seen(request), request));
    });
    const config = flavor.config(upstreamUrl) as Record<string, any>;
    const provider = Object.keys(config.providers)[0]!;
    gateway = await startGateway(upstreamUrl, {
      ...config,
      models: {
        'prompted-model': { provider, model: PROMPTED, structuredOutput: 'prompt' },
        'prompted-text-tools-model': { provider, model: PROMPTED_WITH_TEXT_TOOLS, structuredOutput: 'prompt', toolCalls: 'text' },
      },
      mcp: { callItems: 'function', servers: [{ name: 'tools', url: mcpUrl, allowedTools: ['add'] }] },
      loop: { outputValidation: { enabled: true } },
    });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    mcp.calls.length = 0;
    refusals = 0;
  });
  afterEach(() => {
    expect(refusals, 'requests the upstream without structured output refused').toBe(0);
  });

  /** The same request as JSON and as a stream: both final responses, the stream's events, and the model calls each made. */
  async function both(body: Record<string, unknown>): Promise<{ json: any; streamed: any; events: any[]; calls: number }> {
    const json: any = await client.responses.create({ model: 'prompted-model', ...body } as any);
    assertValidResponse(json);
    const calls = upstream.requests.length;
    const events: any[] = [];
    for await (const event of (await client.responses.create({ model: 'prompted-model', ...body, stream: true } as any)) as any) events.push(event);
    const streamed = assertEventStreamInvariants(events);
    expect(upstream.requests.length).toBe(calls * 2);
    for (const response of [json, streamed]) assertValidExtension('ResponseResourceExtensions', { 'loopgate:loop': response['loopgate:loop'] });
    return { json, streamed, events, calls };
  }

  it('the schema goes to the model in its system prompt; a prose answer is sent back with the errors, and only the valid JSON reaches the client', async () => {
    model = (seen) => (feedbackIn(seen) ? { textPieces: ['{"city": "Oslo", ', '"temp": 3}'] } : { text: 'In Oslo it is 3 degrees today.' });
    const { json, streamed, events, calls } = await both({ instructions: 'You report the weather.', input: 'Weather in Oslo?', text: { format: weatherFormat } });
    expect(calls).toBe(2);

    const [first, second] = upstream.requests.slice(0, 2).map((request) => flavor.seen(request));
    for (const seen of [first!, second!]) {
      const system = systemOf(seen);
      expect(system).toMatch(/^You report the weather\.\n\n# Answer format\n/);
      expect(system).toContain('Schema name: weather\nDescription: The weather in one city.');
      expect(system).toContain(`JSON schema: ${JSON.stringify(WEATHER_SCHEMA)}`);
    }
    expect(second).toContainEqual({ kind: 'assistant', text: 'In Oslo it is 3 degrees today.' });
    expect(feedbackIn(second!)).toContain('not valid JSON');

    for (const response of [json, streamed]) {
      expect(response.status).toBe('completed');
      expect(response.output).toHaveLength(1);
      const answer = response.output[0].content[0].text;
      expect(Weather.parse(JSON.parse(answer))).toEqual({ city: 'Oslo', temp: 3 });
      expect(response['loopgate:loop']).toEqual({ output_validation: { attempts: 2, valid: true } });
      expect(response.usage.output_tokens).toBe(10);
    }
    expect(json.output_text).toBe('{"city": "Oslo", "temp": 3}');
    // The rejected prose never streams.
    expect(events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta).join('')).toBe('{"city": "Oslo", "temp": 3}');
  });

  it('responses.parse with zodTextFormat: a fenced answer is rejected, the bare JSON that follows is parsed by the SDK, streamed or not', async () => {
    model = (seen) => (feedbackIn(seen) ? { text: '{"city":"Lima","temp":19}' } : { text: '```json\n{"city":"Lima","temp":19}\n```' });
    const format = zodTextFormat(Weather, 'weather');
    const parsed = await client.responses.parse({ model: 'prompted-model', input: 'Weather in Lima?', text: { format } });
    assertValidResponse(parsed);
    expect(parsed.output_parsed).toEqual({ city: 'Lima', temp: 19 });
    expect((parsed as any)['loopgate:loop']).toEqual({ output_validation: { attempts: 2, valid: true } });
    const system = systemOf(flavor.seen(upstream.requests[0]!));
    expect(system).toContain('Schema name: weather');
    expect(system).toContain('"city":{"type":"string"}');

    const stream = client.responses.stream({ model: 'prompted-model', input: 'Weather in Lima?', text: { format } });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    assertEventStreamInvariants(events);
    const final = await stream.finalResponse();
    expect(final.output_parsed).toEqual({ city: 'Lima', temp: 19 });
    expect((final as any)['loopgate:loop']).toEqual({ output_validation: { attempts: 2, valid: true } });
    expect(upstream.requests).toHaveLength(4);
    expect(flavor.seen(upstream.requests[3]!)).toContainEqual({ kind: 'assistant', text: '```json\n{"city":"Lima","temp":19}\n```' });
  });

  it('an object that breaks the schema gets its schema errors back; json_object asks for one JSON object', async () => {
    model = (seen) => (feedbackIn(seen) ? { text: '{"city":"Rome","temp":21}' } : { text: '{"city":"Rome","temp":"warm"}' });
    const { json, streamed } = await both({ input: 'Weather in Rome?', text: { format: weatherFormat } });
    expect(feedbackIn(flavor.seen(upstream.requests[1]!))).toContain('/temp must be number');
    for (const response of [json, streamed]) expect(response['loopgate:loop']).toEqual({ output_validation: { attempts: 2, valid: true } });

    upstream.requests.length = 0;
    model = (seen) => (feedbackIn(seen) ? { text: '{"ok":true}' } : { text: '[true]' });
    const object = await both({ input: 'Is it fine?', text: { format: { type: 'json_object' } } });
    const system = systemOf(flavor.seen(upstream.requests[0]!));
    expect(system).toContain('Answer with only one JSON object.');
    expect(system).not.toContain('JSON schema:');
    for (const response of [object.json, object.streamed]) {
      expect(response.output[0].content[0].text).toBe('{"ok":true}');
      expect(response['loopgate:loop']).toEqual({ output_validation: { attempts: 2, valid: true } });
    }
  });

  it('with toolCalls: "text" as well, the model calls a tool in its text, then answers in the format; neither tools nor format go upstream', async () => {
    model = (seen) => {
      const results = resultsIn(seen);
      if (results.length === 0) return { text: '{"tool": "tools__add", "parameters": {"a": 1, "b": 2}}' };
      return feedbackIn(seen) ? { text: `{"city":"Sum","temp":${results[0]}}` } : { text: `The sum is ${results[0]}.` };
    };
    const response: any = await client.responses.create({ model: 'prompted-text-tools-model', input: 'Add 1 and 2.', text: { format: weatherFormat } });
    assertValidResponse(response);
    expect(response.status).toBe('completed');
    expect(response.output.map((item: any) => item.type)).toEqual(['function_call', 'function_call_output', 'message']);
    expect(JSON.parse(response.output_text)).toEqual({ city: 'Sum', temp: 3 });
    expect(response['loopgate:loop']).toEqual({ output_validation: { attempts: 2, valid: true } });
    expect(mcp.calls).toEqual([{ name: 'add', args: { a: 1, b: 2 } }]);
    expect(upstream.requests).toHaveLength(3);
    const system = systemOf(flavor.seen(upstream.requests[0]!));
    expect(system.indexOf('# Tools')).toBeGreaterThanOrEqual(0);
    expect(system.indexOf('# Answer format')).toBeGreaterThan(system.indexOf('# Tools'));
  });
});
