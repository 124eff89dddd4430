import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse, assertValidResponseWithMcpItems } from '../support/openresponses-schema.ts';
import { gemini } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';

const chunk = (data: unknown) => `data: ${JSON.stringify(data)}\r\n\r\n`;
const candidate = (parts: unknown[], finishReason?: string) => ({ candidates: [{ content: { role: 'model', parts }, ...(finishReason && { finishReason }), index: 0 }], modelVersion: 'gemini-2.5-flash' });
const usage = { promptTokenCount: 20, candidatesTokenCount: 6, thoughtsTokenCount: 40, cachedContentTokenCount: 4, totalTokenCount: 66 };

/** Whether a recorded request went to the streaming endpoint. */
const streamed = (request: RecordedRequest) => request.path.includes(':streamGenerateContent');

/**
 * What only Gemini has, through the gateway and the official SDK: thought
 * summaries, thought signatures that must come back on the part they came
 * on, calls without ids, and safety blocks.
 */
describe('Gemini native provider, end to end', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  let client: OpenAI;
  let reply: (request: RecordedRequest) => UpstreamReply;

  beforeAll(async () => {
    const url = await upstream.start();
    upstream.setScript((request) => reply(request));
    gateway = await startGateway(url, gemini.config(url));
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  /** First a thought and a signed call without an id, then (once the result is in) the answer. */
  const thinkThenCall = (request: RecordedRequest): UpstreamReply => {
    const answered = (request.body.contents as any[]).some((content) => content.parts.some((part: any) => part.functionResponse));
    const parts = answered ? [{ text: 'It is 3 degrees in Oslo.' }] : [{ text: 'Need the weather tool.', thought: true }, { functionCall: { name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: 'c2lnLWZvci10aGUtY2FsbA==' }];
    const body = { ...candidate(parts, 'STOP'), usageMetadata: usage };
    return streamed(request) ? { kind: 'sse', pieces: [chunk(body)] } : { kind: 'json', body };
  };

  for (const stream of [false, true]) {
    it('token log probabilities, asked for, come back on the text (responseLogprobs, logprobs: top_logprobs), streamed and not', async () => {
    const logprobsResult = {
      chosenCandidates: [{ token: 'Hi', logProbability: -0.1 }, { token: ' there', logProbability: -0.5 }],
      topCandidates: [{ candidates: [{ token: 'Hi', logProbability: -0.1 }, { token: 'Hello', logProbability: -2.3 }] }, { candidates: [{ token: ' there', logProbability: -0.5 }] }],
    };
    const answer = { candidates: [{ content: { role: 'model', parts: [{ text: 'Hi there' }] }, finishReason: 'STOP', index: 0, logprobsResult }], usageMetadata: usage, modelVersion: 'gemini-2.5-flash' };
    reply = (request) => (streamed(request) ? { kind: 'sse', pieces: [chunk(answer)] } : { kind: 'json', body: answer });
    for (const stream of [false, true]) {
      const response = stream
        ? (await client.responses.stream({ model: gemini.model, input: 'hi', include: ['message.output_text.logprobs'], top_logprobs: 2 }).finalResponse())
        : await client.responses.create({ model: gemini.model, input: 'hi', include: ['message.output_text.logprobs'], top_logprobs: 2 });
      assertValidResponse(response);
      expect(upstream.requests.at(-1)!.body.generationConfig).toMatchObject({ responseLogprobs: true, logprobs: 2 });
      const part = (response.output.find((item) => item.type === 'message') as any).content[0];
      expect(part.logprobs).toEqual([
        { token: 'Hi', logprob: -0.1, bytes: [72, 105], top_logprobs: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105] }, { token: 'Hello', logprob: -2.3, bytes: [72, 101, 108, 108, 111] }] },
        { token: ' there', logprob: -0.5, bytes: [32, 116, 104, 101, 114, 101], top_logprobs: [{ token: ' there', logprob: -0.5, bytes: [32, 116, 104, 101, 114, 101] }] },
      ]);
    }
  });

  it(`thought signatures go back on their call with previous_response_id (${stream ? 'streamed' : 'not streamed'})`, async () => {
      reply = thinkThenCall;
      const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
      const request = { model: 'gemini-2.5-flash', input: 'Weather in Oslo?', tools, reasoning: { effort: 'low' as const, summary: 'auto' as const } };
      let first: any;
      if (stream) {
        const events: any[] = [];
        for await (const event of await client.responses.create({ ...request, stream: true })) events.push(event);
        first = assertEventStreamInvariants(events);
      } else {
        first = await client.responses.create(request);
        assertValidResponse(first);
      }
      expect(streamed(upstream.requests[0]!)).toBe(stream);
      expect(upstream.requests[0]!.body.generationConfig.thinkingConfig).toEqual({ includeThoughts: true, thinkingBudget: 2_048 });
      // No server-side tool is offered: the call is the client's, in a completed response (as OpenAI's API answers).
      expect(first.status).toBe('completed');
      expect(first.output.map((item: any) => item.type)).toEqual(['reasoning', 'function_call']);
      expect(first.output[0].content ?? first.output[0].summary).toEqual(expect.arrayContaining([expect.objectContaining({ text: 'Need the weather tool.' })]));
      const call = first.output[1];
      expect(call).toMatchObject({ name: 'get_weather', arguments: '{"city":"Oslo"}' });
      expect(call.call_id).toMatch(/^call_/);
      expect(first.usage).toMatchObject({ input_tokens: 20, output_tokens: 46, input_tokens_details: { cached_tokens: 4 }, output_tokens_details: { reasoning_tokens: 40 } });

      const second = await client.responses.create({ model: 'gemini-2.5-flash', previous_response_id: first.id, tools, input: [{ type: 'function_call_output', call_id: call.call_id, output: '3°C' }] });
      assertValidResponse(second);
      expect(second.output_text).toBe('It is 3 degrees in Oslo.');
      expect(upstream.requests[1]!.body.contents).toEqual([
        { role: 'user', parts: [{ text: 'Weather in Oslo?' }] },
        { role: 'model', parts: [{ functionCall: { id: call.call_id, name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: 'c2lnLWZvci10aGUtY2FsbA==' }] },
        { role: 'user', parts: [{ functionResponse: { id: call.call_id, name: 'get_weather', response: { output: '3°C' } } }] },
      ]);
    });
  }

  it('calls without a thought signature (resent by a client, or from another provider) carry Google\'s placeholder to Gemini 3, on each step\'s first call only', async () => {
    reply = () => ({ kind: 'json', body: { ...candidate([{ text: 'Done.' }], 'STOP'), usageMetadata: usage } });
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const input: OpenAI.Responses.ResponseInputItem[] = [
      { role: 'user', content: 'Weather in Oslo and Bergen, then in Paris?' },
      { type: 'function_call', call_id: 'call_oslo', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call', call_id: 'call_bergen', name: 'get_weather', arguments: '{"city":"Bergen"}' },
      { type: 'function_call_output', call_id: 'call_oslo', output: '3°C' },
      { type: 'function_call_output', call_id: 'call_bergen', output: '5°C' },
      { type: 'function_call', call_id: 'call_paris', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_paris', output: '12°C' },
    ];
    const signaturesSent = (request: RecordedRequest) => (request.body.contents as any[]).flatMap((content) => content.parts.filter((part: any) => part.functionCall).map((part: any) => [part.functionCall.id, part.thoughtSignature ?? null]));

    for (const model of ['gemini-3-pro-preview', 'gemini-flash-latest']) {
      assertValidResponse(await client.responses.create({ model, input, tools }));
      expect(signaturesSent(upstream.requests.at(-1)!)).toEqual([
        ['call_oslo', 'skip_thought_signature_validator'],
        ['call_bergen', null],
        ['call_paris', 'skip_thought_signature_validator'],
      ]);
    }
    // Older models never checked signatures: nothing is made up for them.
    assertValidResponse(await client.responses.create({ model: 'gemini-2.5-flash', input, tools }));
    expect(signaturesSent(upstream.requests.at(-1)!)).toEqual([['call_oslo', null], ['call_bergen', null], ['call_paris', null]]);
  });

  it('a real signature is never replaced by the placeholder (Gemini 3, previous_response_id)', async () => {
    reply = thinkThenCall;
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const first = await client.responses.create({ model: 'gemini-3-flash-preview', input: 'Weather in Oslo?', tools });
    const call = first.output.find((item) => item.type === 'function_call')!;
    await client.responses.create({ model: 'gemini-3-flash-preview', previous_response_id: first.id, tools, input: [{ type: 'function_call_output', call_id: (call as any).call_id, output: '3°C' }] });
    expect(upstream.requests[1]!.body.contents[1]).toEqual({ role: 'model', parts: [{ functionCall: { id: (call as any).call_id, name: 'get_weather', args: { city: 'Oslo' } }, thoughtSignature: 'c2lnLWZvci10aGUtY2FsbA==' }] });
  });

  it('a safety stop ends incomplete with content_filter; a blocked prompt too, streamed', async () => {
    reply = () => ({ kind: 'json', body: { ...candidate([{ text: 'Partial' }], 'SAFETY'), usageMetadata: usage } });
    const stopped = await client.responses.create({ model: 'gemini-2.5-flash', input: 'something unsafe' });
    assertValidResponse(stopped);
    expect(stopped.status).toBe('incomplete');
    expect(stopped.incomplete_details).toEqual({ reason: 'content_filter' });

    reply = () => ({ kind: 'sse', pieces: [chunk({ promptFeedback: { blockReason: 'SAFETY' }, usageMetadata: { promptTokenCount: 7, totalTokenCount: 7 } })] });
    const events: any[] = [];
    for await (const event of await client.responses.create({ model: 'gemini/gemini-2.5-flash', input: 'something unsafe', stream: true })) events.push(event);
    const blocked = assertEventStreamInvariants(events);
    expect(blocked.status).toBe('incomplete');
    expect(blocked.incomplete_details).toEqual({ reason: 'content_filter' });
    expect(upstream.requests.at(-1)!.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
  });

  it('Google errors reach the client in the OpenResponses error shape', async () => {
    reply = () => ({ kind: 'json', status: 400, body: { error: { code: 400, message: '* GenerateContentRequest.contents: contents is not specified', status: 'INVALID_ARGUMENT' } } });
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gemini-2.5-flash', input: 'x' }) });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_argument', message: '* GenerateContentRequest.contents: contents is not specified' });
  });
});

/** The gateway's own MCP loop over Gemini 3: each call's thought signature goes back on that call, every turn. */
describe('Gemini in the MCP loop', () => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;

  beforeAll(async () => {
    const [url, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    gateway = await startGateway(url, { ...gemini.config(url), mcp: { servers: [{ name: 'calc', url: mcpUrl }] } });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it("the next model call gives each call its own signature back (found by the call, its id being the gateway's), never Google's placeholder", async () => {
    upstream.setScript((request) => {
      const answered = (request.body.contents as any[]).some((content) => content.parts.some((part: any) => part.functionResponse));
      const parts = answered
        ? [{ text: 'Both sums are done.' }]
        : [
            { functionCall: { id: 'g1', name: 'calc__add', args: { a: 1, b: 2 } }, thoughtSignature: 'U0lHX01DUF8x' },
            { functionCall: { id: 'g2', name: 'calc__add', args: { a: 3, b: 4 } } },
          ];
      const answer = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: usage, modelVersion: 'gemini-3-pro-preview' };
      return streamed(request) ? { kind: 'sse', pieces: [chunk(answer)] } : { kind: 'json', body: answer };
    });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    const response = await client.responses.create({ model: 'gemini-3-pro-preview', input: 'Add both.' });
    assertValidResponseWithMcpItems(response);
    expect(response.output_text).toBe('Both sums are done.');
    const sent = (upstream.requests.at(-1)!.body.contents as any[]).flatMap((content) => content.parts.filter((part: any) => part.functionCall).map((part: any) => [part.functionCall.id, part.thoughtSignature ?? null]));
    // The calls go under the gateway's item ids (the history stays the same for every later call, which prompt caches need).
    const ids = response.output.filter((item) => item.type === 'mcp_call').map((item) => item.id);
    expect(sent).toEqual([
      [ids[0], 'U0lHX01DUF8x'],
      [ids[1], null],
    ]);
  });

  it("a step the model began with an MCP call and went on with a client's call comes back with the signed MCP call first, the client's unsigned, the answers in the same order", async () => {
    upstream.setScript((request) => {
      const answered = (request.body.contents as any[]).some((content) => content.parts.some((part: any) => part.functionResponse?.name === 'get_weather'));
      const parts = answered
        ? [{ text: 'Sum and weather are in.' }]
        : [
            { functionCall: { id: 'g1', name: 'calc__add', args: { a: 1, b: 2 } }, thoughtSignature: 'U0lHX01DUF8x' },
            { functionCall: { id: 'g2', name: 'get_weather', args: { city: 'Oslo' } } },
          ];
      const answer = { candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }], usageMetadata: usage, modelVersion: 'gemini-3-pro-preview' };
      return streamed(request) ? { kind: 'sse', pieces: [chunk(answer)] } : { kind: 'json', body: answer };
    });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const paused = await client.responses.create({ model: 'gemini-3-pro-preview', input: 'Add and look up.', tools });
    assertValidResponseWithMcpItems(paused);
    const call = paused.output.find((item) => item.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    const mcpCall = paused.output.find((item) => item.type === 'mcp_call')!;
    const done = await client.responses.create({ model: 'gemini-3-pro-preview', previous_response_id: paused.id, tools, input: [{ type: 'function_call_output', call_id: call.call_id, output: '3°C' }] });
    expect(done.output_text).toBe('Sum and weather are in.');
    const contents = upstream.requests.at(-1)!.body.contents as any[];
    const step = contents.find((content) => content.role === 'model' && content.parts.some((part: any) => part.functionCall))!;
    expect(step.parts.map((part: any) => [part.functionCall.name, part.thoughtSignature ?? null])).toEqual([
      ['calc__add', 'U0lHX01DUF8x'],
      ['get_weather', null],
    ]);
    const answers = contents[contents.indexOf(step) + 1];
    expect(answers.parts.map((part: any) => part.functionResponse.id)).toEqual([mcpCall.id, call.call_id]);
  });
});
