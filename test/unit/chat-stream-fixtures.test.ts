import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { fixture } from '../support/scripted-chat-upstream.ts';
import { responseEventsOf, turnEventsOf } from '../support/turn-helpers.ts';

/**
 * Recorded-format Chat Completions streams (OpenAI, vLLM, Ollama, Gemini's
 * compatibility layer, OpenRouter, Azure) through the translator and the
 * whole event pipeline.
 */
describe('Chat Completions streams → OpenResponses events', () => {
  it('text with usage', async () => {
    const events = await responseEventsOf(fixture('openai-text.sse'));
    const response = assertEventStreamInvariants(events);
    expect(response.status).toBe('completed');
    expect(response.output).toHaveLength(1);
    expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'The capital of France is Paris.', annotations: [] }] });
    expect(response.usage).toEqual({ input_tokens: 24, output_tokens: 7, total_tokens: 31, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } });
    expect(events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta)).toEqual(['The', ' capital', ' of', ' France', ' is', ' Paris', '.']);
  });

  it('parallel tool calls accumulate by index into two function_call items', async () => {
    const response = assertEventStreamInvariants(await responseEventsOf(fixture('openai-parallel-tool-calls.sse')));
    expect(response.status).toBe('completed');
    expect(response.output.map((item: any) => [item.type, item.call_id, item.name, item.arguments, item.status])).toEqual([
      ['function_call', 'call_Vx1mJ9rK2pLq', 'get_weather', '{"city": "Paris"}', 'completed'],
      ['function_call', 'call_Hn4tB8wQ0zYc', 'get_time', '{"zone": "Europe/Paris"}', 'completed'],
    ]);
  });

  it('a forced tool choice that finishes with "stop" still yields the call', async () => {
    const turn = await turnEventsOf(fixture('openai-forced-tool-stop.sse'));
    expect(turn.at(-1)).toEqual({ type: 'finish', finish: { reason: 'tool_calls', raw: 'stop' } });
    const response = assertEventStreamInvariants(await responseEventsOf(fixture('openai-forced-tool-stop.sse')));
    expect(response.output[0]).toMatchObject({ type: 'function_call', name: 'lookup', arguments: '{"q":"x"}' });
  });

  it('Gemini: whole calls in one chunk, no index, finish "stop"', async () => {
    const response = assertEventStreamInvariants(await responseEventsOf(fixture('gemini-tools-finish-stop.sse')));
    expect(response.output.map((item: any) => [item.call_id, item.arguments])).toEqual([
      ['function-call-1', '{"city":"Rome"}'],
      ['function-call-2', '{"city":"Milan"}'],
    ]);
  });

  it('every call at index 0 with different ids becomes separate calls', async () => {
    const response = assertEventStreamInvariants(await responseEventsOf(fixture('compat-all-index-zero.sse')));
    expect(response.output.map((item: any) => [item.call_id, item.name, item.arguments])).toEqual([
      ['chatcmpl-tool-a1', 'add', '{"a":1,"b":2}'],
      ['chatcmpl-tool-b2', 'mul', '{"a":3,"b":4}'],
    ]);
  });

  it('a call whose id never arrives gets a synthesized unique call_id', async () => {
    const response = assertEventStreamInvariants(await responseEventsOf(fixture('compat-missing-id.sse')));
    expect(response.output).toHaveLength(1);
    expect(response.output[0].call_id).toMatch(/^call_[0-9a-f]{32}$/);
    expect(response.output[0]).toMatchObject({ name: 'search', arguments: '{"query":"cats"}' });
  });

  it('Ollama: a whole call without index in one chunk', async () => {
    const response = assertEventStreamInvariants(await responseEventsOf(fixture('ollama-whole-call-no-index.sse')));
    expect(response.output).toEqual([expect.objectContaining({ type: 'function_call', call_id: 'call_k1z9', name: 'get_weather', arguments: '{"city":"Oslo"}' })]);
    expect(response.status).toBe('completed');
  });

  it('whole calls one per chunk with neither index nor id (Gemini-style adapters) are separate calls, not one merged', async () => {
    const response = assertEventStreamInvariants(await responseEventsOf(fixture('compat-whole-calls-no-index-no-id.sse')));
    expect(response.output.map((item: any) => [item.name, item.arguments])).toEqual([
      ['get_weather', '{"city":"Paris"}'],
      ['get_time', '{"tz":"CET"}'],
      ['get_weather', '{"city":"Rome"}'],
    ]);
    expect(new Set(response.output.map((item: any) => item.call_id)).size).toBe(3);
  });

  it('a name repeated on every fragment of one call stays one call; arguments sent as a JSON object (llama.cpp) are its text', async () => {
    const events = await responseEventsOf(fixture('compat-name-repeated-arguments-object.sse'));
    const response = assertEventStreamInvariants(events);
    expect(response.output.map((item: any) => [item.call_id, item.name, item.arguments])).toEqual([
      ['call_a', 'get_weather', '{"city":"Oslo"}'],
      ['call_b', 'get_time', '{"tz":"CET"}'],
    ]);
    for (const event of events.filter((event) => event.type === 'response.function_call_arguments.delta')) expect(typeof event.delta).toBe('string');
  });

  it('text followed by a tool call in one turn gives a message then a call', async () => {
    const response = assertEventStreamInvariants(await responseEventsOf(fixture('openai-text-then-tool.sse')));
    expect(response.output.map((item: any) => item.type)).toEqual(['message', 'function_call']);
    expect(response.output[0].content[0].text).toBe('Let me check.');
  });

  it('refusal deltas become a refusal content part', async () => {
    const events = await responseEventsOf(fixture('openai-refusal.sse'));
    const response = assertEventStreamInvariants(events);
    expect(response.output[0].content).toEqual([{ type: 'refusal', refusal: "I'm sorry, I can't help with that." }]);
    expect(events.some((event) => event.type === 'response.refusal.delta')).toBe(true);
  });

  it('vLLM reasoning_content and Ollama reasoning become a reasoning item before the message', async () => {
    for (const [name, reasoning, text] of [
      ['vllm-reasoning-content.sse', 'The user asks 2+2. That is 4.', '2 + 2 = 4'],
      ['ollama-reasoning.sse', 'Thinking about greetings.', 'Hi there!'],
    ] as const) {
      const events = await responseEventsOf(fixture(name));
      const response = assertEventStreamInvariants(events);
      expect(response.output.map((item: any) => item.type)).toEqual(['reasoning', 'message']);
      expect(response.output[0].content).toEqual([{ type: 'reasoning_text', text: reasoning }]);
      expect(response.output[1].content[0].text).toBe(text);
      // The SDK throws on reasoning delta events it does not know; none are sent.
      expect(events.some((event) => event.type.startsWith('response.reasoning'))).toBe(false);
    }
  });

  it('finish "length" ends incomplete with max_output_tokens; content_filter likewise', async () => {
    const length = assertEventStreamInvariants(await responseEventsOf(fixture('openai-length.sse')));
    expect(length.status).toBe('incomplete');
    expect(length.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(length.output[0].status).toBe('incomplete');
    const filtered = assertEventStreamInvariants(await responseEventsOf(fixture('azure-content-filter.sse')));
    expect(filtered.incomplete_details).toEqual({ reason: 'content_filter' });
  });

  it('cached and reasoning token counts are kept', async () => {
    const response = assertEventStreamInvariants(await responseEventsOf(fixture('openai-cached-reasoning-usage.sse')));
    expect(response.usage).toEqual({ input_tokens: 2048, output_tokens: 300, total_tokens: 2348, input_tokens_details: { cached_tokens: 1024 }, output_tokens_details: { reasoning_tokens: 256 } });
  });

  it('token logprobs reach the delta events and the finished output_text', async () => {
    const events = await responseEventsOf(fixture('openai-logprobs.sse'));
    const response = assertEventStreamInvariants(events);
    const deltas = events.filter((event) => event.type === 'response.output_text.delta');
    expect(deltas.map((event) => event.logprobs.map((entry: any) => entry.token))).toEqual([['Yes'], ['.']]);
    expect(response.output[0].content[0].logprobs).toEqual([
      { token: 'Yes', logprob: -0.0001, bytes: [89, 101, 115], top_logprobs: [{ token: 'Yes', logprob: -0.0001, bytes: [89, 101, 115] }, { token: 'No', logprob: -9.2, bytes: [78, 111] }] },
      { token: '.', logprob: -0.02, bytes: [46], top_logprobs: [{ token: '.', logprob: -0.02, bytes: [46] }, { token: '!', logprob: -4.1, bytes: [33] }] },
    ]);
  });

  it('CRLF streams and comment lines parse like any other', async () => {
    expect(assertEventStreamInvariants(await responseEventsOf(fixture('crlf-text.sse'))).output[0].content[0].text).toBe('Hi!');
    expect(assertEventStreamInvariants(await responseEventsOf(fixture('openrouter-comments.sse'))).output[0].content[0].text).toBe('ok');
  });

  it('an in-band error mid-stream (vLLM object:error, OpenAI error frame) ends the response failed with the partial output', async () => {
    for (const name of ['vllm-error-midstream.sse', 'openai-error-midstream.sse']) {
      const events = await responseEventsOf(fixture(name));
      const response = assertEventStreamInvariants(events);
      expect(events.at(-1).type).toBe('response.failed');
      expect(response.status).toBe('failed');
      expect(response.error.message).toMatch(/^The upstream 'scripted' reported: ./);
      expect(response.output[0].status).toBe('incomplete');
    }
  });

  it('an error in the first frame rejects before any event, so HTTP can still answer with a status', async () => {
    const text = 'data: {"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}\n\n';
    await expect(turnEventsOf(text)).rejects.toSatisfy((error) => error instanceof GatewayError && error.status === 429);
    await expect(turnEventsOf('data: {"object":"error","message":"boom","code":500}\n\n')).rejects.toSatisfy((error) => error instanceof GatewayError && error.status === 502);
  });

  it('a stream that stops without a finish reason fails as truncated', async () => {
    const truncated = fixture('openai-text.sse').split('\n\n').slice(0, 3).join('\n\n') + '\n\n';
    const response = assertEventStreamInvariants(await responseEventsOf(truncated));
    expect(response.status).toBe('failed');
    expect(response.error.code).toBe('upstream_stream_truncated');
  });

  it('a stream its [DONE] ends without a finish reason is the answer it holds, as the same completion unstreamed; with nothing said, no answer', async () => {
    const frames = fixture('openai-text.sse').split('\n\n').filter((frame) => frame.startsWith('data: {'));
    const withoutFinish = frames.map((frame) => frame.replace('"finish_reason":"stop"', '"finish_reason":null')).join('\n\n') + '\n\ndata: [DONE]\n\n';
    const response = assertEventStreamInvariants(await responseEventsOf(withoutFinish));
    expect(response.status).toBe('completed');
    expect(response.output[0].content[0].text).toBe('The capital of France is Paris.');
    const onlyUsage = 'data: {"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":0,"total_tokens":3}}\n\ndata: [DONE]\n\n';
    // Nothing was said, so nothing is committed: the call's own refusal, which routing may take elsewhere and a client gets as a status.
    const empty = await responseEventsOf(onlyUsage).catch((error: unknown) => error);
    expect(empty).toBeInstanceOf(GatewayError);
    expect(empty).toMatchObject({ status: 502, code: 'upstream_no_answer', message: expect.stringContaining('ended its stream without an answer') });
  });
});
