import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidResponse, assertValidExtension } from '../support/openresponses-schema.ts';
import { flavors, type Seen } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest } from '../support/scripted-chat-upstream.ts';

/**
 * `truncation: "auto"` over both upstream APIs, through openai v7: the
 * conversation fitted to a configured context window, or to one learned from
 * the upstream's refusal; `disabled` (the default) passes the refusal on as a
 * 400 `context_length_exceeded`.
 */
const WINDOW = 300;
const tools = [{ type: 'function' as const, name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: false }];
const question = (turn: number) => `Turn ${turn}: ${'tell me more about the history of the northern lights. '.repeat(4)}`;
const answer = (turn: number) => `Answer ${turn}: ${'the aurora is caused by charged particles. '.repeat(2)}`;

/** The upstream's own count, a tokenizer that is not the gateway's: a token per four characters of the request's JSON. */
function upstreamTokens(request: RecordedRequest): number {
  return Math.ceil(JSON.stringify(request.body).length / 4);
}

const conversationOf = (seen: Seen[]) => seen.filter((entry) => entry.kind !== 'system');

/** Every call the model is shown has its result, and every result its call. */
function expectPairsIntact(seen: Seen[]): void {
  const calls = seen.flatMap((entry) => (entry.kind === 'call' ? [entry.id] : []));
  const results = seen.flatMap((entry) => (entry.kind === 'result' ? [entry.id] : []));
  expect(results.sort()).toEqual(calls.sort());
}

describe.each(flavors)('truncation over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  /** The upstream's context window; null: it takes anything. */
  let limit: number | null = null;
  let gateway: RunningGateway;
  let client: OpenAI;
  const modelRequests = () => upstream.requests.filter((request) => request.method === 'POST');

  beforeAll(async () => {
    const url = await upstream.start();
    upstream.setScript((request) => {
      const tokens = upstreamTokens(request);
      if (limit !== null && tokens > limit) return flavor.tooLong(tokens, limit);
      const seen = flavor.seen(request);
      const last = seen.at(-1);
      const turn = seen.filter((entry) => entry.kind === 'user').length;
      if (last?.kind === 'user' && last.text.includes('please look it up')) return flavor.render(request, { calls: [{ id: `call_${turn}`, name: 'lookup', args: { q: 'aurora' } }] });
      return flavor.render(request, { text: answer(turn) });
    });
    gateway = await startGateway(url, { ...flavor.config(url), models: { small: { provider: flavor.provider, model: flavor.model, contextWindow: WINDOW } } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    limit = null;
  });

  /** Eight turns under `model`, a developer message first and a function call of turn seven answered in turn eight; returns the last response's id. */
  async function converse(model: string): Promise<string> {
    let previous: string | undefined;
    let pendingCall: string | null = null;
    for (let turn = 1; turn <= 8; turn++) {
      const text = turn === 7 ? `${question(turn)} please look it up` : question(turn);
      const input: OpenAI.Responses.ResponseInputItem[] = turn === 1 ? [{ role: 'developer', content: 'Always answer in English.' }] : [];
      if (pendingCall) input.push({ type: 'function_call_output', call_id: pendingCall, output: 'Auroras follow the solar cycle. '.repeat(3) });
      input.push({ role: 'user', content: text });
      const response = await client.responses.create({ model, tools, input, ...(previous && { previous_response_id: previous }) });
      const call = response.output.find((item) => item.type === 'function_call');
      pendingCall = call?.type === 'function_call' ? call.call_id : null;
      previous = response.id;
    }
    return previous!;
  }

  it('fits a long previous_response_id conversation to a configured window: instructions, developer message and newest turn kept, the newest older turns that fit, pairs intact', async () => {
    const previous = await converse('small');
    const params = { model: 'small', previous_response_id: previous, instructions: 'Be brief.', tools, input: question(9) };

    upstream.requests.length = 0;
    const whole = await client.responses.create(params);
    expect(whole.truncation).toBe('disabled');
    expect((whole as unknown as Record<string, unknown>)['loopgate:truncation']).toBeUndefined();
    const wholeSeen = flavor.seen(modelRequests().at(-1)!);

    upstream.requests.length = 0;
    const truncated = await client.responses.create({ ...params, truncation: 'auto' });
    assertValidResponse(truncated);
    expect(truncated.truncation).toBe('auto');
    expect(modelRequests()).toHaveLength(1);
    const seen = flavor.seen(modelRequests()[0]!);

    // Instructions and the developer message are never dropped.
    const system = seen.filter((entry) => entry.kind === 'system').map((entry) => (entry as { text: string }).text).join('\n');
    expect(system).toContain('Be brief.');
    expect(system).toContain('Always answer in English.');
    // What is left is the newest part of the conversation, starting with a user turn and ending with the newest turn.
    const kept = conversationOf(seen);
    const all = conversationOf(wholeSeen);
    expect(kept.length).toBeGreaterThan(1);
    expect(kept.length).toBeLessThan(all.length);
    expect(kept).toEqual(all.slice(all.length - kept.length));
    expect(kept[0]!.kind).toBe('user');
    expect(kept.at(-1)).toEqual({ kind: 'user', text: question(9) });
    // Turn seven's call and its output (sent with turn eight) are the oldest kept.
    expect(kept.slice(0, 3).map((entry) => entry.kind)).toEqual(['user', 'call', 'result']);
    expectPairsIntact(seen);

    const report = (truncated as unknown as Record<string, any>)['loopgate:truncation'];
    assertValidExtension('ResponseResourceExtensions', truncated);
    assertValidExtension('TruncationReport', report);
    expect(report).toEqual({ dropped_items: all.length - kept.length, context_window: WINDOW, window_source: 'configured', estimated_input_tokens: expect.any(Number) });
    expect(report.estimated_input_tokens).toBeLessThanOrEqual(WINDOW);
    // Only what had to go went: the kept part fills most of the window.
    expect(report.estimated_input_tokens).toBeGreaterThan(WINDOW / 2);
    // Stored with the response, and on the stream's terminal event.
    expect((await client.responses.retrieve(truncated.id) as unknown as Record<string, unknown>)['loopgate:truncation']).toEqual(report);
    const events: any[] = [];
    for await (const event of await client.responses.create({ ...params, truncation: 'auto', stream: true })) events.push(event);
    const final = assertEventStreamInvariants(events);
    expect(final['loopgate:truncation']).toEqual(report);
  });

  // An upstream that names no window (OpenAI's Responses API) teaches nothing to learn from: the test below it shows what happens instead.
  if (flavor.tooLongNamesWindow)   it('learns the window from the upstream\'s refusal: the call is retried smaller once, and the next request is truncated before its first call', async () => {
    const model = `${flavor.model}-learning`;
    const previous = await converse(model);
    limit = Math.floor(upstreamTokens(modelRequests().at(-1)!) * 0.6);

    upstream.requests.length = 0;
    const first = await client.responses.create({ model, previous_response_id: previous, tools, input: question(9), truncation: 'auto' });
    assertValidResponse(first);
    expect(first.status).toBe('completed');
    const [refused, retried] = modelRequests();
    expect(modelRequests()).toHaveLength(2);
    expect(upstreamTokens(refused!)).toBeGreaterThan(limit);
    expect(upstreamTokens(retried!)).toBeLessThanOrEqual(limit);
    expect(conversationOf(flavor.seen(retried!)).at(-1)).toEqual({ kind: 'user', text: question(9) });
    expectPairsIntact(flavor.seen(retried!));
    expect((first as unknown as Record<string, unknown>)['loopgate:truncation']).toMatchObject({ context_window: limit, window_source: 'learned' });

    upstream.requests.length = 0;
    const second = await client.responses.create({ model, previous_response_id: first.id, tools, input: question(10), truncation: 'auto' });
    expect(second.status).toBe('completed');
    expect(modelRequests()).toHaveLength(1);
    expect(upstreamTokens(modelRequests()[0]!)).toBeLessThanOrEqual(limit);
    expect((second as unknown as Record<string, unknown>)['loopgate:truncation']).toMatchObject({ context_window: limit, window_source: 'learned' });
  });

  if (!flavor.tooLongNamesWindow) it('an upstream refusal that names no window: the 400 context_length_exceeded stands and nothing is retried, even with truncation auto', async () => {
    const model = `${flavor.model}-learning`;
    const previous = await converse(model);
    limit = Math.floor(upstreamTokens(modelRequests().at(-1)!) * 0.6);
    upstream.requests.length = 0;
    await expect(client.responses.create({ model, previous_response_id: previous, tools, input: question(9), truncation: 'auto' })).rejects.toMatchObject({ status: 400, code: 'context_length_exceeded' });
    expect(modelRequests()).toHaveLength(1);
  });

  it('disabled (the default): the upstream\'s refusal is a 400 context_length_exceeded, JSON or streamed, and nothing is retried', async () => {
    limit = 50;
    await expect(client.responses.create({ model: flavor.model, input: question(1) })).rejects.toMatchObject({ status: 400, code: 'context_length_exceeded', type: 'invalid_request_error' });
    for (const body of [{ model: flavor.model, input: question(1), truncation: 'disabled' }, { model: flavor.model, input: question(1), stream: true }]) {
      const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(response.status).toBe(400);
      const error = await response.json();
      assertErrorEnvelope(error);
      expect(error.error).toMatchObject({ code: 'context_length_exceeded', param: 'input' });
    }
    expect(modelRequests()).toHaveLength(3);
  });

  it('a newest turn too long for the window on its own is a 400 context_length_exceeded, without an upstream call', async () => {
    const request = { model: 'small', instructions: 'Be brief.', input: [{ role: 'user' as const, content: question(1) }, { role: 'assistant' as const, content: answer(1) }, { role: 'user' as const, content: 'word '.repeat(2_000) }], truncation: 'auto' as const };
    await expect(client.responses.create(request)).rejects.toMatchObject({ status: 400, code: 'context_length_exceeded', param: 'input', message: expect.stringContaining(`(${WINDOW} tokens)`) });
    expect(modelRequests()).toHaveLength(0);
  });
});

/**
 * OpenAI's newer models refuse with their own input limit ("Input tokens
 * exceed the configured limit of N tokens"), the output having a limit of
 * its own: learned as a window of the input alone, so `max_output_tokens` is
 * not taken out of it (nothing was learned from this wording before: every
 * `truncation: "auto"` request was a 400).
 */
describe('truncation: a window of the input alone (OpenAI configured input limit)', () => {
  const upstream = new ScriptedChatUpstream();
  let limit = Number.POSITIVE_INFINITY;
  let gateway: RunningGateway;
  let client: OpenAI;
  const conversation = (turns: number) => Array.from({ length: turns }, (_, index) => ({ role: 'user' as const, content: question(index + 1) }));

  beforeAll(async () => {
    upstream.setScript((request) => {
      const tokens = upstreamTokens(request);
      if (tokens > limit) {
        return { kind: 'json', status: 400, body: { error: { message: `Input tokens exceed the configured limit of ${limit} tokens. Your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } } };
      }
      return { kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: tokens, completion_tokens: 1, total_tokens: tokens + 1 } } };
    });
    gateway = await startGateway(await upstream.start());
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('learns the limit, retries smaller once, and keeps no room for the output within it', async () => {
    limit = Math.floor(upstreamTokens({ body: { model: 'gpt-next', messages: conversation(8) } } as RecordedRequest) * 0.6);
    const first = await client.responses.create({ model: 'gpt-next', input: conversation(8), truncation: 'auto', max_output_tokens: limit });
    assertValidResponse(first);
    expect(first.status).toBe('completed');
    expect(upstream.requests).toHaveLength(2);
    expect(upstreamTokens(upstream.requests[1]!)).toBeLessThanOrEqual(limit);
    expect((first as unknown as Record<string, unknown>)['loopgate:truncation']).toMatchObject({ context_window: limit, window_source: 'learned' });
    // A max_output_tokens as large as the whole limit would leave no room for any input in a window of input and output together.
    upstream.requests.length = 0;
    const second = await client.responses.create({ model: 'gpt-next', input: conversation(8), truncation: 'auto', max_output_tokens: limit });
    assertValidResponse(second);
    expect(second.status).toBe('completed');
    expect(upstream.requests).toHaveLength(1);
  });
});
