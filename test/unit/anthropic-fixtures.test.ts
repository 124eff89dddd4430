import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideFailover } from '../../src/providers/routing/failover-decision.ts';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { AnthropicProvider } from '../../src/providers/anthropic/anthropic-provider.ts';
import { decodeReasoning } from '../../src/providers/anthropic/reasoning-blocks.ts';
import type { TurnRequest } from '../../src/providers/provider.ts';
import { turnRequest } from '../support/turn-request.ts';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';
import { collectLoopEvents } from '../support/turn-helpers.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/anthropic/${name}`, import.meta.url), 'utf8');

const baseRequest: TurnRequest = turnRequest({ model: 'claude-sonnet-4-5', stream: true });

/** Recorded-format Anthropic streams, served with real `event:` lines, through the provider and the event pipeline. */
describe('Anthropic Messages streams → OpenResponses events', () => {
  const upstream = new ScriptedChatUpstream();
  let provider: AnthropicProvider;

  beforeAll(async () => {
    const url = await upstream.start();
    provider = new AnthropicProvider({ name: 'anthropic', baseUrl: new URL(url).origin, apiKey: 'sk-ant-test', defaultMaxTokens: 1024, connections: 4, timeoutMs: 5_000 });
  });
  afterAll(async () => {
    await provider.close();
    await upstream.close();
  });

  async function run(name: string, pieceSize = 29, edit: (text: string) => string = (text) => text) {
    const text = edit(fixture(name));
    const pieces: string[] = [];
    for (let offset = 0; offset < text.length; offset += pieceSize) pieces.push(text.slice(offset, offset + pieceSize));
    upstream.setScript(() => ({ kind: 'sse', pieces }));
    const signal = new AbortController().signal;
    const events = await collectLoopEvents(await provider.startTurn(baseRequest, signal), { model: 'claude-sonnet-4-5' }, signal);
    return { events, response: assertEventStreamInvariants(events) };
  }

  it('text, with cache reads and writes counted as input', async () => {
    const { response } = await run('text.sse');
    expect(response.status).toBe('completed');
    expect(response.output[0].content[0].text).toBe('Hello! How can I help?');
    expect(response.usage).toEqual({ input_tokens: 2112, output_tokens: 9, total_tokens: 2121, input_tokens_details: { cached_tokens: 2000 }, output_tokens_details: { reasoning_tokens: 0 } });
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.body).toMatchObject({ model: 'claude-sonnet-4-5', max_tokens: 1024, stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
    expect(sent.headers['anthropic-version']).toBeTruthy();
  });

  it('tool use: input_json_delta becomes argument deltas; text before the call is a message', async () => {
    const { response } = await run('tool-use.sse');
    expect(response.output.map((item: any) => item.type)).toEqual(['message', 'function_call']);
    expect(response.output[1]).toMatchObject({ call_id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', arguments: '{"city": "San Francisco"}' });
  });

  it('parallel tool use; a call without input deltas gets {}', async () => {
    const { response } = await run('parallel-tool-use.sse');
    expect(response.output.map((item: any) => [item.name, item.arguments])).toEqual([
      ['get_weather', '{"city":"Paris"}'],
      ['get_time', '{}'],
    ]);
  });

  it('a call whose input comes whole in its content_block_start (a compatible server), with no deltas, keeps that input', async () => {
    const { response } = await run('parallel-tool-use.sse', 29, (text) => text.replace('"name":"get_time","input":{}', '"name":"get_time","input":{"zone":"UTC"}'));
    expect(response.output.map((item: any) => [item.name, item.arguments])).toEqual([
      ['get_weather', '{"city":"Paris"}'],
      ['get_time', '{"zone":"UTC"}'],
    ]);
  });

  it('thinking keeps its text and signature in the reasoning item', async () => {
    const { response } = await run('thinking.sse');
    expect(response.output.map((item: any) => item.type)).toEqual(['reasoning', 'message']);
    expect(response.output[0].content).toEqual([{ type: 'reasoning_text', text: 'The user wants 2+2. That is 4.' }]);
    expect(decodeReasoning(response.output[0].encrypted_content)).toEqual({ type: 'thinking', thinking: 'The user wants 2+2. That is 4.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds' });
  });

  it("the tokens Claude thought in (usage.output_tokens_details.thinking_tokens) are the response's reasoning tokens", async () => {
    const { response } = await run('thinking.sse', 29, (text) => text.replace('"usage":{"output_tokens":40}', '"usage":{"output_tokens":40,"output_tokens_details":{"thinking_tokens":31}}'));
    expect(response.usage).toMatchObject({ output_tokens: 40, output_tokens_details: { reasoning_tokens: 31 } });
  });

  it('redacted thinking is carried opaquely', async () => {
    const { response } = await run('redacted-thinking.sse');
    expect(response.output[0].type).toBe('reasoning');
    expect(decodeReasoning(response.output[0].encrypted_content)).toEqual({ type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pLmN4kz' });
  });

  it('stop reasons: refusal → incomplete (content_filter), max_tokens → incomplete (max_output_tokens)', async () => {
    expect((await run('refusal.sse')).response.incomplete_details).toEqual({ reason: 'content_filter' });
    const limited = (await run('max-tokens.sse')).response;
    expect(limited.status).toBe('incomplete');
    expect(limited.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('an overloaded_error before any content rejects as a 503 with a retry hint', async () => {
    upstream.setScript(() => ({ kind: 'sse', pieces: [fixture('overloaded-before-content.sse')] }));
    const error = await provider.startTurn(baseRequest, new AbortController().signal).catch((caught) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ status: 503, code: 'upstream_overloaded', headers: { 'retry-after': '2' } });
    // The 2 s is the gateway's suggestion to the client; routing waits only for what the upstream said.
    expect(decideFailover(error)).toEqual({ kind: 'retry', retryAfterMs: null });
  });

  it('a 200 without an event stream, or one ending before any content, rejects as a 502 that routing may take elsewhere', async () => {
    // A proxy's login page under a 200: nothing the SDK can read as an event.
    upstream.setScript(() => ({ kind: 'json', headers: { 'content-type': 'text/html' }, body: '<html><body>Sign in to continue</body></html>' }));
    const page = await provider.startTurn(baseRequest, new AbortController().signal).catch((caught) => caught);
    expect(page).toBeInstanceOf(GatewayError);
    expect(page).toMatchObject({ status: 502, code: 'upstream_invalid_response' });
    expect(decideFailover(page).kind).toBe('retry');
    const started = fixture('text.sse').split('\n\n').find((piece) => piece.includes('message_start'));
    expect(started).toBeDefined();
    upstream.setScript(() => ({ kind: 'sse', pieces: [`${started}\n\n`] }));
    const cut = await provider.startTurn(baseRequest, new AbortController().signal).catch((caught) => caught);
    expect(cut).toMatchObject({ status: 502, code: 'upstream_stream_truncated' });
    expect(decideFailover(cut).kind).toBe('retry');
  });

  it("a 529 that says when to come back keeps its retry-after (2 s only when it says nothing)", async () => {
    upstream.setScript(() => ({ kind: 'json', status: 529, headers: { 'retry-after': '9' }, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }));
    const error = await provider.startTurn(baseRequest, new AbortController().signal).catch((caught) => caught);
    expect(error).toMatchObject({ status: 503, code: 'upstream_overloaded', headers: { 'retry-after': '9' } });
    // Routing cools the deployment down that long, as it does for a 429.
    expect(decideFailover(error)).toEqual({ kind: 'retry', retryAfterMs: 9000 });
  });

  it('an error after content ends the response failed, keeping the partial output', async () => {
    const { events, response } = await run('error-after-content.sse');
    expect(events.at(-1).type).toBe('response.failed');
    expect(response.error.message).toContain('Internal server error');
    expect(response.output[0].content[0].text).toBe('Partial');
  });

  it('pause_turn is continued automatically with the content so far, within the same turn', async () => {
    const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    const message = (text: string, stopReason: string, usage: number) => [
      event('message_start', { type: 'message_start', message: { id: 'msg', type: 'message', role: 'assistant', content: [], usage: { input_tokens: usage, output_tokens: 1 } } }),
      event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
      event('content_block_stop', { type: 'content_block_stop', index: 0 }),
      event('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason }, usage: { output_tokens: 3 } }),
      event('message_stop', { type: 'message_stop' }),
    ];
    upstream.setScript((request) => ({ kind: 'sse', pieces: request.body.messages.length === 1 ? message('Searching… ', 'pause_turn', 10) : message('found it.', 'end_turn', 20) }));
    const before = upstream.requests.length;
    const signal = new AbortController().signal;
    const events = await collectLoopEvents(await provider.startTurn(baseRequest, signal), { model: 'claude-sonnet-4-5' }, signal);
    const response = assertEventStreamInvariants(events);
    expect(response.status).toBe('completed');
    expect(response.output[0].content[0].text).toBe('Searching… found it.');
    expect(response.usage).toMatchObject({ input_tokens: 30, output_tokens: 6 });
    const continued = upstream.requests.slice(before);
    expect(continued).toHaveLength(2);
    expect(continued[1]!.body.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Searching… ' }] });
  });

  it('HTTP errors: 4xx pass through with param; 529 is a 503', async () => {
    upstream.setScript(() => ({ kind: 'json', status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages.0.content.0.text: text content blocks must be non-empty' } } }));
    const bad = await provider.startTurn(baseRequest, new AbortController().signal).catch((caught) => caught);
    expect(bad).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'messages.0.content.0.text' });
    upstream.setScript(() => ({ kind: 'json', status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }));
    expect(await provider.startTurn(baseRequest, new AbortController().signal).catch((caught) => caught)).toMatchObject({ status: 503 });
  });
});
