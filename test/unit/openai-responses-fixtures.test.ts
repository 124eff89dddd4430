import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { OpenAIResponsesProvider } from '../../src/providers/openai-responses/openai-responses-provider.ts';
import type { TurnEvent, TurnRequest } from '../../src/providers/provider.ts';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { assertValidEventWithHostedItems } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';
import { collectLoopEvents } from '../support/turn-helpers.ts';
import { turnRequest } from '../support/turn-request.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/openai-responses/${name}`, import.meta.url), 'utf8');

const streamed: TurnRequest = turnRequest({ model: 'gpt-5-mini', stream: true });

/** Recorded-format Responses API streams, served with real `event:` lines, through the provider and the event pipeline. */
describe('OpenAI Responses streams → OpenResponses events', () => {
  const upstream = new ScriptedChatUpstream();
  let provider: OpenAIResponsesProvider;

  beforeAll(async () => {
    const url = await upstream.start();
    provider = new OpenAIResponsesProvider({
      name: 'responses',
      baseUrl: url,
      apiKey: 'sk-test',
      upstreamStore: false,
      encryptedReasoning: true,
      nativeCustomTools: true,
      connections: 4,
      connectTimeoutMs: 5_000,
      firstByteTimeoutMs: 5_000,
      idleTimeoutMs: 5_000,
    });
  });
  afterAll(async () => {
    await provider.close();
    await upstream.close();
  });

  function serve(name: string, pieceSize = 31): void {
    const text = fixture(name);
    const pieces: string[] = [];
    for (let offset = 0; offset < text.length; offset += pieceSize) pieces.push(text.slice(offset, offset + pieceSize));
    upstream.setScript(() => ({ kind: 'sse', pieces }));
  }

  async function turnEvents(name: string): Promise<TurnEvent[]> {
    serve(name);
    const events: TurnEvent[] = [];
    for await (const event of await provider.startTurn(streamed, new AbortController().signal)) events.push(event);
    return events;
  }

  async function run(name: string) {
    serve(name);
    const signal = new AbortController().signal;
    const events = await collectLoopEvents(await provider.startTurn(streamed, signal), { model: 'gpt-5-mini' }, signal);
    return { events, response: assertEventStreamInvariants(events) };
  }

  it('text with cached-token usage; the call is stateless and asks for encrypted reasoning', async () => {
    const { events, response } = await run('text.sse');
    expect(response.status).toBe('completed');
    expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'The capital of France is Paris.' }] });
    expect(events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta)).toEqual(['The', ' capital', ' of', ' France', ' is', ' Paris', '.']);
    expect(response.usage).toEqual({ input_tokens: 24, output_tokens: 7, total_tokens: 31, input_tokens_details: { cached_tokens: 16 }, output_tokens_details: { reasoning_tokens: 0 } });
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1/responses');
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.body).toEqual({ model: 'gpt-5-mini', input: [{ type: 'message', role: 'user', content: 'hi' }], stream: true, store: false, include: ['reasoning.encrypted_content'] });
  });

  it('reasoning summary streams as reasoning text, its encrypted_content is kept, then a function call', async () => {
    const turn = await turnEvents('reasoning-then-tool.sse');
    expect(turn[0]).toEqual({ type: 'upstream.response', id: 'resp_1b2c3d4e5f60718293a4b5c6d7e8f90a', model: 'gpt-5-mini-2025-08-07' });
    expect(turn.filter((event) => event.type === 'tool_call.delta').map((event) => (event as { delta: string }).delta).join('')).toBe('{"city":"Paris"}');
    expect(turn.at(-1)).toEqual({ type: 'finish', finish: { reason: 'tool_calls', raw: 'completed' } });

    const { response } = await run('reasoning-then-tool.sse');
    expect(response.output.map((item: any) => item.type)).toEqual(['reasoning', 'function_call']);
    expect(response.output[0].content).toEqual([{ type: 'reasoning_text', text: '**Checking the weather**\n\nThe user wants Paris weather.\n\nI will call get_weather.' }]);
    expect(response.output[0].encrypted_content).toMatch(/^gAAAAAB/);
    expect(response.output[1]).toMatchObject({ call_id: 'call_Vx1mJ9rK2pLqA7', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' });
    expect(response.usage.output_tokens_details).toEqual({ reasoning_tokens: 32 });
  });

  it('text, then two calls, each keyed by its own item id', async () => {
    const { response } = await run('text-then-parallel-tool-calls.sse');
    expect(response.output.map((item: any) => [item.type, item.call_id ?? item.content[0].text, item.arguments ?? null])).toEqual([
      ['message', 'Let me check both.', null],
      ['function_call', 'call_Hn4tB8wQ0zYc', '{"city":"Paris"}'],
      ['function_call', 'call_Kp2sD6yR1xWe', '{"zone":"Europe/Paris"}'],
    ]);
  });

  it('incomplete answers: max_output_tokens → length, content_filter → content_filter', async () => {
    expect((await turnEvents('incomplete-max-output-tokens.sse')).at(-1)).toEqual({ type: 'finish', finish: { reason: 'length', raw: 'max_output_tokens' } });
    const limited = (await run('incomplete-max-output-tokens.sse')).response;
    expect(limited.status).toBe('incomplete');
    expect(limited.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(limited.output[0].content[0].text).toBe('Once upon a time there');
    const filtered = (await run('incomplete-content-filter.sse')).response;
    expect(filtered.incomplete_details).toEqual({ reason: 'content_filter' });
  });

  it('a web search: its call and progress pass through opaque, its citation follows the text it points into; a non-streamed answer gives the same', async () => {
    const turn = await turnEvents('web-search.sse');
    const kinds = turn.map((event) => (event.type === 'hosted_item.progress' ? `${event.type}:${event.event.type}` : event.type)).filter((kind, index, all) => kind !== 'text.delta' || all[index - 1] !== 'text.delta');
    expect(kinds).toEqual([
      'upstream.response',
      'hosted_item.added',
      'hosted_item.progress:response.web_search_call.in_progress',
      'hosted_item.progress:response.web_search_call.searching',
      'hosted_item.progress:response.web_search_call.completed',
      'hosted_item.done',
      'message.start',
      'text.delta',
      'text.annotation',
      'text.delta',
      // The tier the final response says it was served at.
      'service_tier',
      'usage',
      'finish',
    ]);
    const done = turn.find((event) => event.type === 'hosted_item.done') as Extract<TurnEvent, { type: 'hosted_item.done' }>;
    expect(done.item).toEqual({ id: 'ws_68c1f0a3c4d5e6f7081920a1b2c3d4e5', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'Eiffel Tower height 2024', sources: [{ type: 'url', url: 'https://www.toureiffel.paris/en/the-monument/key-figures' }] } });
    // The progress event carries what the upstream said, without its position on the upstream's stream.
    expect(turn.find((event) => event.type === 'hosted_item.progress')).toEqual({ type: 'hosted_item.progress', itemId: done.item.id, event: { type: 'response.web_search_call.in_progress' } });

    serve('web-search.sse');
    const signal = new AbortController().signal;
    const events = await collectLoopEvents(await provider.startTurn(streamed, signal), { model: 'gpt-5-mini' }, signal);
    const response = assertEventStreamInvariants(events, assertValidEventWithHostedItems);
    expect(response.output.map((item: any) => item.type)).toEqual(['web_search_call', 'message']);
    expect(response.output[1].content[0].annotations).toEqual([expect.objectContaining({ type: 'url_citation', start_index: 59, end_index: 155 })]);

    const body = JSON.parse(fixture('web-search.sse').trim().split('\n').at(-1)!.slice(6)).response;
    upstream.setScript(() => ({ kind: 'json', body }));
    const whole: TurnEvent[] = [];
    for await (const event of await provider.startTurn({ ...streamed, stream: false }, signal)) whole.push(event);
    // Read whole, the call is added as it finished; everything else is the same, the citation after the text.
    const settled = (events: TurnEvent[]) => events.filter((event) => !['hosted_item.added', 'hosted_item.progress', 'text.delta'].includes(event.type));
    expect(settled(whole)).toEqual(settled(turn));
    expect(whole.map((event) => event.type)).toEqual(['upstream.response', 'hosted_item.added', 'hosted_item.done', 'message.start', 'text.delta', 'text.annotation', 'service_tier', 'usage', 'finish']);
  });

  it('code interpreter and image generation: their progress (code deltas, partial images) reaches the client scoped to the gateway\'s item', async () => {
    const code = { id: 'ci_1', type: 'code_interpreter_call', status: 'completed', code: 'print(6*7)', container_id: 'cntr_1', outputs: [{ type: 'logs', logs: '42' }] };
    const image = { id: 'ig_1', type: 'image_generation_call', status: 'completed', result: 'iVBORw0KGgo=' };
    const frames = [
      { type: 'response.created', response: { id: 'resp_t', model: 'm', status: 'in_progress', output: [] } },
      { type: 'response.output_item.added', output_index: 0, item: { id: 'ci_1', type: 'code_interpreter_call', status: 'in_progress', code: '', container_id: 'cntr_1', outputs: null } },
      { type: 'response.code_interpreter_call.in_progress', output_index: 0, item_id: 'ci_1' },
      { type: 'response.code_interpreter_call_code.delta', output_index: 0, item_id: 'ci_1', delta: 'print(6*7)' },
      { type: 'response.code_interpreter_call_code.done', output_index: 0, item_id: 'ci_1', code: 'print(6*7)' },
      { type: 'response.code_interpreter_call.interpreting', output_index: 0, item_id: 'ci_1' },
      { type: 'response.code_interpreter_call.completed', output_index: 0, item_id: 'ci_1' },
      { type: 'response.output_item.done', output_index: 0, item: code },
      { type: 'response.output_item.added', output_index: 1, item: { id: 'ig_1', type: 'image_generation_call', status: 'in_progress' } },
      { type: 'response.image_generation_call.generating', output_index: 1, item_id: 'ig_1' },
      { type: 'response.image_generation_call.partial_image', output_index: 1, item_id: 'ig_1', partial_image_index: 0, partial_image_b64: 'iVBOR' },
      { type: 'response.output_item.done', output_index: 1, item: image },
      { type: 'response.completed', response: { id: 'resp_t', model: 'm', status: 'completed', output: [code, image], usage: { input_tokens: 3, output_tokens: 1 } } },
    ].map((frame, index) => ({ ...frame, sequence_number: index }));
    upstream.setScript(() => ({ kind: 'sse', pieces: [frames.map((frame) => `event: ${frame.type}\ndata: ${JSON.stringify(frame)}\n\n`).join('')] }));
    const signal = new AbortController().signal;
    const events = await collectLoopEvents(await provider.startTurn(streamed, signal), { model: 'gpt-5-mini' }, signal);
    const response = assertEventStreamInvariants(events, assertValidEventWithHostedItems);
    expect(response.output).toEqual([code, image]);
    const progress = events.filter((event) => /^response\.(code_interpreter|image_generation)/.test(event.type));
    expect(progress.map(({ sequence_number: _sequence, ...event }) => event)).toEqual([
      { type: 'response.code_interpreter_call.in_progress', item_id: 'ci_1', output_index: 0 },
      { type: 'response.code_interpreter_call_code.delta', item_id: 'ci_1', output_index: 0, delta: 'print(6*7)' },
      { type: 'response.code_interpreter_call_code.done', item_id: 'ci_1', output_index: 0, code: 'print(6*7)' },
      { type: 'response.code_interpreter_call.interpreting', item_id: 'ci_1', output_index: 0 },
      { type: 'response.code_interpreter_call.completed', item_id: 'ci_1', output_index: 0 },
      { type: 'response.image_generation_call.generating', item_id: 'ig_1', output_index: 1 },
      { type: 'response.image_generation_call.partial_image', item_id: 'ig_1', output_index: 1, partial_image_index: 0, partial_image_b64: 'iVBOR' },
    ]);
  });

  it('a compatible server that reports a hosted call without an id has it added once, when done, given an id', async () => {
    const frames = [
      { type: 'response.created', response: { id: 'resp_c', model: 'm', status: 'in_progress', output: [] } },
      { type: 'response.output_item.added', output_index: 0, item: { type: 'image_generation_call', status: 'in_progress' } },
      { type: 'response.output_item.done', output_index: 0, item: { type: 'image_generation_call', status: 'completed', result: 'iVBORw0KGgo=' } },
      { type: 'response.completed', response: { id: 'resp_c', model: 'm', status: 'completed', output: [], usage: { input_tokens: 3, output_tokens: 1 } } },
    ];
    upstream.setScript(() => ({ kind: 'sse', pieces: [frames.map((frame) => `event: ${frame.type}\ndata: ${JSON.stringify(frame)}\n\n`).join('')] }));
    const turn: TurnEvent[] = [];
    for await (const event of await provider.startTurn(streamed, new AbortController().signal)) turn.push(event);
    const added = turn.find((event) => event.type === 'hosted_item.added') as Extract<TurnEvent, { type: 'hosted_item.added' }>;
    expect(added.item).toEqual({ type: 'image_generation_call', status: 'completed', result: 'iVBORw0KGgo=', id: expect.stringMatching(/^hc_/) });
    expect(turn.filter((event) => event.type.startsWith('hosted_item.'))).toEqual([added, { type: 'hosted_item.done', item: added.item }]);
  });

  it('a refusal streams as refusal content', async () => {
    const { response } = await run('refusal.sse');
    expect(response.output[0].content).toEqual([{ type: 'refusal', refusal: "I'm sorry, I can't help with that." }]);
  });

  it('response.failed before any content rejects startTurn with a 502', async () => {
    serve('failed-before-content.sse');
    const error = await provider.startTurn(streamed, new AbortController().signal).catch((caught) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 502, code: 'server_error' });
    expect(error.message).toContain('The server had an error');
  });

  it('an error event at once with rate_limit_exceeded rejects with a 429', async () => {
    serve('rate-limited-at-once.sse');
    const error = await provider.startTurn(streamed, new AbortController().signal).catch((caught) => caught);
    expect(error).toMatchObject({ status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded' });
  });

  it("OpenAI's own error events, their error nested, keep their code and message: a rate limit is a 429, a context-length refusal the 400 truncation reads", async () => {
    serve('rate-limited-nested-error.sse');
    const limited = await provider.startTurn(streamed, new AbortController().signal).catch((caught) => caught);
    expect(limited).toMatchObject({ status: 429, code: 'rate_limit_exceeded', message: expect.stringContaining('Rate limit reached for gpt-5-mini') });
    serve('context-length-nested-error.sse');
    const tooLong = await provider.startTurn(streamed, new AbortController().signal).catch((caught) => caught);
    expect(tooLong).toMatchObject({ status: 400, code: 'context_length_exceeded', message: expect.stringContaining('exceeds the context window') });
  });

  it('a rate limit in the stream carries the delay its message gives as retry-after (clients wait that long only when told so in a header); a spent quota is a 429 insufficient_quota, which no retry cures', async () => {
    const failed = (error: Record<string, unknown>) => `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', sequence_number: 0, response: { id: 'resp_x', object: 'response', status: 'failed', output: [], error } })}\n\n`;
    upstream.setScript(() => ({ kind: 'sse', pieces: [failed({ code: 'rate_limit_exceeded', message: 'Rate limit reached for gpt-5 in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 1500. Please try again in 2.5s.' })] }));
    expect(await provider.startTurn(streamed, new AbortController().signal).catch((caught) => caught)).toMatchObject({ status: 429, code: 'rate_limit_exceeded', headers: { 'retry-after': '3', 'retry-after-ms': '2500' } });
    upstream.setScript(() => ({ kind: 'sse', pieces: [failed({ code: 'rate_limit_exceeded', message: 'Rate limit reached. Please try again in 640ms.' })] }));
    expect(await provider.startTurn(streamed, new AbortController().signal).catch((caught) => caught)).toMatchObject({ status: 429, headers: { 'retry-after': '1', 'retry-after-ms': '640' } });
    upstream.setScript(() => ({ kind: 'sse', pieces: [failed({ code: 'insufficient_quota', message: 'You exceeded your current quota, please check your plan and billing details.' })] }));
    expect(await provider.startTurn(streamed, new AbortController().signal).catch((caught) => caught)).toMatchObject({ status: 429, type: 'insufficient_quota', code: 'insufficient_quota' });
  });

  it('an error event after content ends the response failed, keeping the partial output', async () => {
    const { events, response } = await run('error-midstream.sse');
    expect(events.at(-1).type).toBe('response.failed');
    expect(response.error).toMatchObject({ code: 'server_error' });
    expect(response.error.message).toContain('The server had an error');
    expect(response.output[0].content[0].text).toBe('Partial');
  });

  it('a stream that closes without a terminal event is reported truncated', async () => {
    const turn = await turnEvents('truncated.sse');
    expect(turn.at(-1)).toMatchObject({ type: 'error', code: 'upstream_stream_truncated' });
  });

  it('a frame that is not JSON fails clearly, before or after content', async () => {
    upstream.setScript(() => ({ kind: 'sse', pieces: ['data: {not json\n\n'] }));
    expect(await provider.startTurn(streamed, new AbortController().signal).catch((caught) => caught)).toMatchObject({ status: 502, code: 'upstream_invalid_response' });
    const text = fixture('text.sse');
    upstream.setScript(() => ({ kind: 'sse', pieces: [text.slice(0, text.indexOf('event: response.output_text.delta', text.indexOf('"delta"'))), 'data: nope\n\n'] }));
    const events: TurnEvent[] = [];
    for await (const event of await provider.startTurn(streamed, new AbortController().signal)) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: 'error', code: 'upstream_invalid_response' });
  });

  it('a server that streams only the terminal response is read from its output', async () => {
    const body = JSON.parse(fixture('reasoning-and-text.json'));
    upstream.setScript(() => ({ kind: 'sse', pieces: [`event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', sequence_number: 0, response: body })}\n\n`] }));
    const events: TurnEvent[] = [];
    for await (const event of await provider.startTurn(streamed, new AbortController().signal)) events.push(event);
    expect(events.map((event) => event.type)).toEqual(['upstream.response', 'reasoning.start', 'reasoning.delta', 'reasoning.encrypted', 'message.start', 'text.delta', 'usage', 'finish']);
    // A normal stream's terminal response repeats items already read: nothing comes twice.
    expect((await turnEvents('text.sse')).filter((event) => event.type === 'text.delta')).toHaveLength(7);
  });

  it('non-streamed JSON: reasoning and text give the same events as a stream', async () => {
    upstream.setScript(() => ({ kind: 'json', body: JSON.parse(fixture('reasoning-and-text.json')) }));
    const events: TurnEvent[] = [];
    for await (const event of await provider.startTurn({ ...streamed, stream: false }, new AbortController().signal)) events.push(event);
    expect(upstream.requests.at(-1)!.body.stream).toBe(false);
    expect(events).toEqual([
      { type: 'upstream.response', id: 'resp_93a4b5c6d7e8f90a1b2c3d4e5f607182', model: 'gpt-5-mini-2025-08-07' },
      // Each reasoning item too.
      { type: 'reasoning.start' },
      { type: 'reasoning.delta', delta: 'Simple arithmetic.' },
      { type: 'reasoning.encrypted', value: expect.stringMatching(/^gAAAAAB/) },
      // Each message of the answer starts its own.
      { type: 'message.start' },
      { type: 'text.delta', delta: '2 + 2 = 4.' },
      { type: 'usage', usage: { inputTokens: 30, outputTokens: 40, cachedInputTokens: 0, reasoningTokens: 28 } },
      { type: 'finish', finish: { reason: 'stop', raw: 'completed' } },
    ]);
  });

  it('HTTP errors: a 400 passes through with its param; a 401 is the gateway\'s misconfiguration (502)', async () => {
    upstream.setScript(() => ({ kind: 'json', status: 400, body: { error: { message: "Unsupported parameter: 'temperature'.", type: 'invalid_request_error', param: 'temperature', code: 'unsupported_parameter' } } }));
    expect(await provider.startTurn(streamed, new AbortController().signal).catch((caught) => caught)).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'temperature', code: 'unsupported_parameter' });
    upstream.setScript(() => ({ kind: 'json', status: 401, body: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } } }));
    expect(await provider.startTurn(streamed, new AbortController().signal).catch((caught) => caught)).toMatchObject({ status: 502, code: 'upstream_auth_failed' });
  });
});
