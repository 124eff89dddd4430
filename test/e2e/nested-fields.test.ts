import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidResponse } from '../support/openresponses-schema.ts';
import { flavors, openaiChat, openaiResponses, scriptModel } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';

/**
 * Fields inside the request (an input part, an item, a tool, `text`,
 * `reasoning`) are held to what OpenAI defines, as OpenAI's API holds them:
 * a key nobody defines is a 400 naming it, where it used to be stripped in
 * silence; every field OpenAI's types define is taken, and served, passed
 * on, or refused as unsupported.
 */

const PIXEL = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** A stateless client's second turn, its items as OpenAI returns them: every provenance field OpenAI reports on them. */
const RESENT_ITEMS = [
  { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Look this up.' }], internal_chat_message_metadata_passthrough: { turn_id: 't1' } },
  {
    type: 'message',
    id: 'msg_1',
    role: 'assistant',
    status: 'completed',
    phase: 'commentary',
    content: [{ type: 'output_text', text: 'Looking.', annotations: [], logprobs: [{ token: 'Looking', bytes: [76], logprob: -0.1, top_logprobs: [] }] }],
  },
  { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: '{"q":"a"}', status: 'completed', caller: { type: 'direct' }, async: false, created_by: 'user_1' },
  { type: 'function_call_output', call_id: 'call_1', name: 'lookup', output: 'found a', caller: { type: 'direct' }, created_by: 'user_1', status: 'completed' },
  { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'And this picture?' }, { type: 'input_image', image_url: PIXEL, detail: 'original', file_id: null }] },
];

const LOOKUP_TOOL = {
  type: 'function',
  name: 'lookup',
  description: 'Looks a thing up.',
  parameters: { type: 'object', properties: { q: { type: 'string' } } },
  strict: false,
  // What the Agents SDK sends for a tool with an output schema, and OpenAI's own defaults.
  output_schema: { type: 'object', properties: { found: { type: 'string' } } },
  allowed_callers: ['direct'],
  async: false,
};

describe('nested request fields', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  const post = async (body: Record<string, unknown>) => {
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: openaiChat.model, input: 'x', ...body }) });
    const answer = { status: response.status, body: (await response.json()) as any };
    if (answer.status === 200) assertValidResponse(answer.body);
    return answer;
  };
  const refused = async (body: Record<string, unknown>, expected: { param: string; code: string; mentions: string }) => {
    const before = upstream.requests.length;
    const { status, body: answer } = await post(body);
    expect(status, JSON.stringify(answer)).toBe(400);
    assertErrorEnvelope(answer);
    expect(answer.error).toMatchObject({ type: 'invalid_request_error', param: expected.param, code: expected.code });
    expect(answer.error.message).toContain(expected.mentions);
    expect(upstream.requests.length, 'a refused request never reaches the upstream').toBe(before);
  };
  beforeAll(async () => {
    const upstreamUrl = await upstream.start();
    gateway = await startGateway(upstreamUrl, openaiChat.config(upstreamUrl));
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('a key nobody defines, anywhere in the request, is a 400 unknown_parameter naming its path, as OpenAI answers', async () => {
    await refused({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi', cache_control: { type: 'ephemeral' } }] }] }, { param: 'input[0].content[0].cache_control', code: 'unknown_parameter', mentions: "Unknown parameter: 'input[0].content[0].cache_control'." });
    // A Chat Completions tool sent to /v1/responses with a name too: its `function` object would have been dropped, and its parameters with it.
    await refused({ tools: [{ type: 'function', name: 'f', function: { name: 'f', parameters: { type: 'object' } } }] }, { param: 'tools[0].function', code: 'unknown_parameter', mentions: "'tools[0].function'" });
    await refused({ input: [{ type: 'function_call_output', call_id: 'c', output: 'x', is_error: true }] }, { param: 'input[0].is_error', code: 'unknown_parameter', mentions: "'input[0].is_error'" });
    await refused({ input: [{ role: 'user', content: 'hi', name: 'alice' }] }, { param: 'input[0].name', code: 'unknown_parameter', mentions: "'input[0].name'" });
    await refused({ text: { format: { type: 'json_schema', name: 'x', schema: { type: 'object' }, strict: true, additionalProperties: false } } }, { param: 'text.format.additionalProperties', code: 'unknown_parameter', mentions: 'text.format.additionalProperties' });
    await refused({ reasoning: { effort: 'low', budget_tokens: 1000 } }, { param: 'reasoning.budget_tokens', code: 'unknown_parameter', mentions: 'reasoning.budget_tokens' });
    await refused({ tool_choice: { type: 'function', name: 'f', function: { name: 'f' } }, tools: [{ type: 'function', name: 'f' }] }, { param: 'tool_choice.function', code: 'unknown_parameter', mentions: 'tool_choice.function' });
    await refused({ prompt_cache_options: { mode: 'explicit', ttl_seconds: 60 } }, { param: 'prompt_cache_options.ttl_seconds', code: 'unknown_parameter', mentions: 'ttl_seconds' });
  });

  it("items resent as OpenAI returns them (caller, created_by, async, logprobs, an output's name, Codex's bookkeeping) are taken, and none of it reaches the upstream", async () => {
    scriptModel(upstream, openaiChat, () => ({ text: 'A pixel.' }));
    const { status, body } = await post({ input: RESENT_ITEMS, tools: [LOOKUP_TOOL], reasoning: { effort: 'max', generate_summary: 'auto', context: 'all_turns', mode: 'standard' } });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.output.at(-1).content[0].text).toBe('A pixel.');
    // The older `generate_summary` is read as `summary`.
    // `max` is OpenAI's, not the OpenResponses schema's: echoed as the schema's nearest (the upstream got it as sent).
    expect(body.reasoning).toMatchObject({ effort: 'xhigh', summary: 'auto' });
    const sent = upstream.requests.at(-1)!.body;
    const text = JSON.stringify(sent);
    for (const field of ['internal_chat_message_metadata_passthrough', 'created_by', 'caller', 'logprobs', 'output_schema', 'allowed_callers']) expect(text).not.toContain(field);
    expect(sent.reasoning_effort).toBe('max');
    // Chat Completions has no `original` detail: the nearest, `high`.
    const image = sent.messages.at(-1).content.find((part: any) => part.type === 'image_url');
    expect(image.image_url).toEqual({ url: PIXEL, detail: 'high' });
  });

  it('fields OpenAI defines that the gateway cannot serve are refused by name, never dropped', async () => {
    await refused({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-abc', detail: 'auto' }] }] }, { param: 'input[0].content[0].file_id', code: 'unsupported_parameter', mentions: 'no Files API' });
    await refused({ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-abc' }] }] }, { param: 'input[0].content[0].file_id', code: 'unsupported_parameter', mentions: 'file_data' });
    await refused({ tools: [{ ...LOOKUP_TOOL, allowed_callers: ['programmatic'] }] }, { param: 'tools[0].allowed_callers', code: 'unsupported_parameter', mentions: "include 'direct'" });
    await refused({ tools: [{ ...LOOKUP_TOOL, async: true }] }, { param: 'tools[0].async', code: 'unsupported_parameter', mentions: 'later response' });
    await refused({ tools: [{ type: 'custom', name: 'apply_patch', async: true }] }, { param: 'tools[0].async', code: 'unsupported_parameter', mentions: 'later response' });
    const mcp = { type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example/mcp' };
    await refused({ tools: [{ ...mcp, connector_id: 'connector_gmail' }] }, { param: 'tools[0].connector_id', code: 'unsupported_parameter', mentions: 'connectors' });
    await refused({ tools: [{ ...mcp, defer_loading: true }] }, { param: 'tools[0].defer_loading', code: 'unsupported_parameter', mentions: 'tool search' });
    expect((await post({ tools: [{ ...LOOKUP_TOOL, allowed_callers: ['direct', 'programmatic'] }] })).status).toBe(200);
  });

  it('the same strictness holds for conversation items, the compact request and input token counts', async () => {
    const conversation = await fetch(`${gateway.baseURL}/conversations`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: [{ role: 'user', content: 'hi', name: 'alice' }] }) });
    expect(conversation.status).toBe(400);
    expect(((await conversation.json()) as any).error).toMatchObject({ param: 'items[0].name', code: 'unknown_parameter' });
    const compact = await fetch(`${gateway.baseURL}/responses/compact`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: openaiChat.model, input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi', weight: 2 }] }] }) });
    expect(compact.status).toBe(400);
    expect(((await compact.json()) as any).error).toMatchObject({ param: 'input[0].content[0].weight', code: 'unknown_parameter' });
    const count = await fetch(`${gateway.baseURL}/responses/input_tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: openaiChat.model, tools: [{ type: 'function', name: 'f', parameters: {}, strict: true, function: {} }] }) });
    expect(count.status).toBe(400);
    expect(((await count.json()) as any).error).toMatchObject({ param: 'tools[0].function', code: 'unknown_parameter' });
  });
});

describe('nested request fields over a Responses upstream', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  beforeAll(async () => {
    const upstreamUrl = await upstream.start();
    gateway = await startGateway(upstreamUrl, openaiResponses.config(upstreamUrl));
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it("reasoning's summary (by either name), context and mode, a tool's output_schema and a file's detail are passed on as OpenAI takes them", async () => {
    scriptModel(upstream, openaiResponses, () => ({ text: 'done' }));
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    const response = await client.responses.create({
      model: openaiResponses.model,
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'Read it.' }, { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=', detail: 'low' }] }],
      tools: [LOOKUP_TOOL as any],
      reasoning: { effort: 'high', generate_summary: 'detailed', context: 'current_turn', mode: 'pro' },
    });
    assertValidResponse(response);
    const sent = upstream.requests.at(-1)!.body;
    expect(sent.reasoning).toEqual({ effort: 'high', summary: 'detailed', context: 'current_turn', mode: 'pro' });
    expect(sent.tools[0]).toMatchObject({ type: 'function', name: 'lookup', output_schema: LOOKUP_TOOL.output_schema });
    expect(sent.tools[0]).not.toHaveProperty('allowed_callers');
    expect(sent.input[0].content[1]).toMatchObject({ type: 'input_file', filename: 'a.pdf', detail: 'low' });
  });

  it('reasoning.summary alone reaches the upstream: Codex asks for summaries so, and got none from a Responses upstream before', async () => {
    scriptModel(upstream, openaiResponses, () => ({ text: 'done' }));
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    assertValidResponse(await client.responses.create({ model: openaiResponses.model, input: 'x', reasoning: { effort: 'medium', summary: 'auto' } }));
    expect(upstream.requests.at(-1)!.body.reasoning).toEqual({ effort: 'medium', summary: 'auto' });
  });
});

describe.each(flavors.filter((flavor) => flavor.name !== 'openai-responses'))("reasoning effort 'max' over $name", (flavor) => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  beforeAll(async () => {
    const upstreamUrl = await upstream.start();
    gateway = await startGateway(upstreamUrl, flavor.config(upstreamUrl));
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it("is taken (OpenAI lists it among the efforts) and asks the upstream for at least as much reasoning as 'xhigh'", async () => {
    scriptModel(upstream, flavor, () => ({ text: 'thought hard' }));
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    const asked = async (effort: 'xhigh' | 'max') => {
      const response = await client.responses.create({ model: flavor.model, input: 'x', reasoning: { effort } as any });
      assertValidResponse(response);
      // The schema's nearest: its enum has no 'max'.
      expect(response.reasoning?.effort).toBe('xhigh');
      expect(response.output_text).toBe('thought hard');
      const body = upstream.requests.at(-1)!.body;
      return body.reasoning_effort ?? body.thinking?.budget_tokens ?? body.generationConfig?.thinkingConfig?.thinkingBudget;
    };
    const xhigh = await asked('xhigh');
    const max = await asked('max');
    if (typeof max === 'string') expect(max).toBe('max');
    else expect(max).toBeGreaterThanOrEqual(xhigh);
  });

  it("'minimal' asks for the least reasoning that is some (Claude: its least thinking budget), echoed as 'low'", async () => {
    scriptModel(upstream, flavor, () => ({ text: 'thought briefly' }));
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    const response = await client.responses.create({ model: flavor.model, input: 'x', reasoning: { effort: 'minimal' } });
    assertValidResponse(response);
    expect(response.reasoning?.effort).toBe('low');
    const body = upstream.requests.at(-1)!.body;
    const asked = body.reasoning_effort ?? body.thinking?.budget_tokens ?? body.generationConfig?.thinkingConfig?.thinkingBudget;
    if (typeof asked === 'string') expect(asked).toBe('minimal');
    else expect(asked).toBeGreaterThan(0);
  });
});
