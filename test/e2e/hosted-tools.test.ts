import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config/load-config.ts';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidEventWithHostedItems, assertValidResponseWithHostedItems, assertValidResponseWithMcpItems } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream, textCompletion, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

const fixtureText = readFileSync(new URL('../fixtures/openai-responses/web-search.sse', import.meta.url), 'utf8');
/** The recorded stream's events, and its final response (what a non-streamed call answers). */
const recorded = fixtureText
  .split('\n\n')
  .filter((block) => block.trim())
  .map((block) => JSON.parse(block.split('\n').find((line) => line.startsWith('data: '))!.slice(6)));
const recordedResponse = recorded.at(-1).response;
const [searchCall, answer] = recordedResponse.output;
const citation = answer.content[0].annotations[0];
/** The call as it goes back to a stateless upstream: whole, but for the id of an item it never stored. */
const { id: _searchId, ...searchCallSentBack } = searchCall;

/** As Codex and the SDK send it, with a field the gateway has no reason to know (kept, not dropped). */
const webSearch = { type: 'web_search', search_context_size: 'medium', user_location: { type: 'approximate', country: 'FR' }, external_web_access: true } as const;

function responsesText(text: string): Record<string, unknown> {
  return {
    id: 'resp_plain',
    object: 'response',
    status: 'completed',
    model: 'gpt-5-mini',
    output: [{ id: 'msg_plain', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }],
    usage: { input_tokens: 20, output_tokens: 4 },
  };
}

/**
 * Hosted tools over an OpenAI Responses upstream, through the real gateway
 * and the official SDK: a hosted tool the upstream runs is offered to it as
 * the client named it, its calls and citations come back as OpenAI shows
 * them, go back upstream on a continuation, and still mix with the
 * gateway's own tools; upstreams that do not run it still have it omitted
 * (or refused) by the policy.
 */
describe('hosted tools over an OpenAI Responses upstream', () => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let reply: (request: RecordedRequest) => UpstreamReply;
  let gateway: RunningGateway;
  let refusing: RunningGateway;
  let client: OpenAI;
  let mcpUrl: string;

  beforeAll(async () => {
    const [url, serverUrl] = await Promise.all([upstream.start(), mcp.start()]);
    mcpUrl = serverUrl;
    upstream.setScript((request) => reply(request));
    const providers = {
      responses: { type: 'openai-responses', baseUrl: url, apiKey: 'sk-test' },
      bare: { type: 'openai-responses', baseUrl: url, apiKey: 'sk-test', hostedTools: [] },
      chat: { type: 'openai-chat', baseUrl: url, apiKey: 'sk-test' },
    };
    const models = {
      'chat-model': { provider: 'chat' },
      'bare-model': { provider: 'bare' },
      'text-calls': { provider: 'responses', toolCalls: 'text' },
      'all-run-it': { deployments: [{ provider: 'responses', model: 'gpt-a' }, { provider: 'responses', model: 'gpt-b' }] },
      'one-does-not': { deployments: [{ provider: 'responses', model: 'gpt-a' }, { provider: 'bare', model: 'gpt-b' }] },
    };
    const mcpAllowed = { allowedUrls: [new URL(serverUrl).origin + '/'] };
    gateway = await startGateway(url, { providers, models, defaultProvider: 'responses', mcp: mcpAllowed });
    refusing = await startGateway(url, { providers, models, defaultProvider: 'responses', loop: { hostedTools: 'reject' } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await Promise.all([gateway.close(), refusing.close()]);
    await Promise.all([upstream.close(), mcp.close()]);
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    reply = (request) => (request.body.stream ? { kind: 'sse', pieces: [fixtureText] } : { kind: 'json', body: recordedResponse });
  });

  it('streamed: web_search is offered upstream as sent; its call, progress events and citation reach the client in order', async () => {
    const { data: stream, response: http } = await client.responses
      .create({ model: 'gpt-5-mini', input: 'How tall is the Eiffel Tower?', tools: [webSearch as any], include: ['web_search_call.action.sources'], stream: true })
      .withResponse();
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    expect(http.headers.get('x-loopgate-omitted-tools')).toBeNull();

    const sent = upstream.requests[0]!.body;
    expect(sent.tools).toEqual([webSearch]);
    expect(sent.include).toEqual(['reasoning.encrypted_content', 'web_search_call.action.sources']);

    const final = assertEventStreamInvariants(events, assertValidEventWithHostedItems);
    assertValidResponseWithHostedItems(final);
    expect(final.output).toEqual([searchCall, { ...answer, id: expect.stringMatching(/^msg_/), content: [{ type: 'output_text', text: answer.content[0].text, annotations: [citation] }] }]);
    expect(final).not.toHaveProperty('loopgate:omitted_tools');

    const scoped = events.filter((event) => event.type.startsWith('response.web_search_call.'));
    expect(scoped.map((event) => [event.type, event.item_id, event.output_index])).toEqual([
      ['response.web_search_call.in_progress', searchCall.id, 0],
      ['response.web_search_call.searching', searchCall.id, 0],
      ['response.web_search_call.completed', searchCall.id, 0],
    ]);
    const added = events.find((event) => event.type === 'response.output_item.added' && event.item.type === 'web_search_call');
    expect(added.item).toMatchObject({ id: searchCall.id, status: 'in_progress' });
    const annotation = events.find((event) => event.type === 'response.output_text.annotation.added');
    expect(annotation).toMatchObject({ item_id: final.output[1].id, output_index: 1, content_index: 0, annotation_index: 0, annotation: citation });
    // Said after the text it points into, before the text part is done.
    const textDone = events.findIndex((event) => event.type === 'response.output_text.done');
    expect(events.indexOf(annotation)).toBeLessThan(textDone);
    expect(events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta).join('').length).toBeGreaterThanOrEqual(citation.end_index);
  });

  it('the SDK\'s stream() helper accepts the hosted events and ends with the same output', async () => {
    const stream = client.responses.stream({ model: 'gpt-5-mini', input: 'How tall is the Eiffel Tower?', tools: [webSearch as any] });
    const seen: string[] = [];
    stream.on('response.web_search_call.searching', (event) => seen.push(event.item_id));
    const final = await stream.finalResponse();
    expect(seen).toEqual([searchCall.id]);
    expect(final.output[0]).toEqual(searchCall);
    expect(final.output_text).toBe(answer.content[0].text);
  });

  it('JSON: the call and the citation are in the response, and are stored with it', async () => {
    const response: any = await client.responses.create({ model: 'gpt-5-mini', input: 'How tall is the Eiffel Tower?', tools: [webSearch as any] });
    assertValidResponseWithHostedItems(response);
    expect(upstream.requests[0]!.body).toMatchObject({ stream: false, tools: [webSearch] });
    expect(response.output.map((item: any) => item.type)).toEqual(['web_search_call', 'message']);
    expect(response.output[0]).toEqual(searchCall);
    expect(response.output[1].content[0].annotations).toEqual([citation]);
    expect(response.tools).toEqual([]);
    const stored: any = await client.responses.retrieve(response.id);
    expect(stored.output).toEqual(response.output);
  });

  it('tool_choice naming a hosted tool the upstream runs goes upstream as named (echoed as "required"); naming one it is not offered is a 400 on tool_choice.type', async () => {
    const preview = { type: 'web_search_preview' } as const;
    const response: any = await client.responses.create({ model: 'gpt-5-mini', input: 'Search, please.', tools: [preview], tool_choice: preview });
    assertValidResponseWithHostedItems(response);
    expect(upstream.requests[0]!.body).toMatchObject({ tools: [preview], tool_choice: preview });
    expect(response.tool_choice).toBe('required');

    upstream.requests.length = 0;
    const refusals = [
      client.responses.create({ model: 'gpt-5-mini', input: 'x', tools: [webSearch as any], tool_choice: preview }),
      client.responses.create({ model: 'chat-model', input: 'x', tools: [preview], tool_choice: preview }),
    ];
    for (const refusal of refusals) {
      const error: any = await refusal.catch((caught) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_value', param: 'tool_choice.type' });
    }
    expect(upstream.requests).toHaveLength(0);
  });

  it("a hosted tool among allowed_tools (the AI SDK lists them for allowedTools): allowed upstream where it runs, left out with the tool where it is omitted", async () => {
    const note = { type: 'function' as const, name: 'note', parameters: { type: 'object', properties: {} }, strict: false };
    const allowed = { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'note' }, { type: 'web_search' }] } as any;
    const response: any = await client.responses.create({ model: 'gpt-5-mini', input: 'Search, please.', tools: [webSearch as any, note], tool_choice: allowed });
    assertValidResponseWithHostedItems(response);
    expect(upstream.requests[0]!.body.tool_choice).toEqual({ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'note' }, { type: 'web_search' }] });
    expect(response.tool_choice).toEqual({ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'note' }] });

    // On a Chat Completions model web_search is omitted, and with it its entry.
    upstream.requests.length = 0;
    reply = () => textCompletion('Hi');
    assertValidResponseWithHostedItems(await client.responses.create({ model: 'chat-model', input: 'x', tools: [webSearch as any, note], tool_choice: allowed }));
    expect(upstream.requests[0]!.body.tool_choice).toEqual({ type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'note' } }] } });
    // Nothing allowed is left: no tool may be called, and none can be required.
    upstream.requests.length = 0;
    assertValidResponseWithHostedItems(await client.responses.create({ model: 'chat-model', input: 'x', tools: [webSearch as any, note], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'web_search' }] } as any }));
    expect(upstream.requests[0]!.body.tool_choice).toBe('none');
    upstream.requests.length = 0;
    const refusals = [
      [{ type: 'allowed_tools', mode: 'required', tools: [{ type: 'web_search' }] }, 'chat-model', 'tool_choice.tools'],
      [{ type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'note' }, { type: 'code_interpreter' }] }, 'gpt-5-mini', 'tool_choice.tools[1].type'],
    ] as const;
    for (const [toolChoice, model, param] of refusals) {
      const error: any = await client.responses.create({ model, input: 'x', tools: [webSearch as any, note], tool_choice: toolChoice as any }).catch((caught) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_value', param });
    }
    expect(upstream.requests).toHaveLength(0);
  });

  it('continuation by previous_response_id sends the hosted call back upstream whole (without the id a stateless upstream never stored); resent as input it goes back the same', async () => {
    const first: any = await client.responses.create({ model: 'gpt-5-mini', input: 'How tall is the Eiffel Tower?', tools: [webSearch as any] });
    reply = () => ({ kind: 'json', body: responsesText('About 1,083 feet.') });
    const second = await client.responses.create({ model: 'gpt-5-mini', previous_response_id: first.id, input: 'In feet?', tools: [webSearch as any] });
    expect(second.output_text).toBe('About 1,083 feet.');
    const expected = [
      { type: 'message', role: 'user', content: 'How tall is the Eiffel Tower?' },
      searchCallSentBack,
      // Its citation goes back with the text it points into, as the client would resend it.
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: answer.content[0].text, annotations: answer.content[0].annotations }] },
      { type: 'message', role: 'user', content: 'In feet?' },
    ];
    expect(upstream.requests[1]!.body.input).toEqual(expected);

    // In a conversation too.
    const conversation = await client.conversations.create({});
    reply = (request) => (request.body.input.length === 1 ? { kind: 'json', body: recordedResponse } : { kind: 'json', body: responsesText('About 1,083 feet.') });
    await client.responses.create({ model: 'gpt-5-mini', conversation: conversation.id, input: 'How tall is the Eiffel Tower?', tools: [webSearch as any] });
    upstream.requests.length = 2;
    await client.responses.create({ model: 'gpt-5-mini', conversation: conversation.id, input: 'In feet?' });
    expect(upstream.requests[2]!.body.input).toEqual(expected);
    upstream.requests.length = 2;

    // A stateless client resends the items it was given.
    await client.responses.create({ model: 'gpt-5-mini', store: false, input: [{ role: 'user', content: 'How tall is the Eiffel Tower?' }, first.output[0], first.output[1], { role: 'user', content: 'In feet?' }] as any });
    expect(upstream.requests[2]!.body.input).toEqual(expected);
  });

  it('continued on a Chat Completions model (or with text tool calls), the hosted call is left out (as another provider\'s reasoning is) and the answer kept', async () => {
    const first: any = await client.responses.create({ model: 'gpt-5-mini', input: 'How tall is the Eiffel Tower?', tools: [webSearch as any] });
    reply = () => textCompletion('About 1,083 feet.');
    const second = await client.responses.create({ model: 'chat-model', previous_response_id: first.id, input: 'In feet?' });
    expect(second.output_text).toBe('About 1,083 feet.');
    expect(upstream.requests[1]!.path).toBe('/v1/chat/completions');
    expect(upstream.requests[1]!.body.messages).toEqual([
      { role: 'user', content: 'How tall is the Eiffel Tower?' },
      { role: 'assistant', content: answer.content[0].text },
      { role: 'user', content: 'In feet?' },
    ]);

    // So is a model that calls tools in its text, even over the Responses upstream that ran the search.
    reply = () => ({ kind: 'json', body: responsesText('About 1,083 feet.') });
    await client.responses.create({ model: 'text-calls', previous_response_id: first.id, input: 'In feet?' });
    expect(upstream.requests[2]!.body.input.map((item: any) => item.type)).toEqual(['message', 'message', 'message']);
  });

  it('one turn with a web_search_call and a call of the gateway\'s MCP tool: the gateway runs its tool, the upstream gets both back', async () => {
    const calc = { type: 'mcp', server_label: 'calc', server_url: mcpUrl, require_approval: 'never', allowed_tools: ['add'] };
    const call = { id: 'fc_68c1f0b1', type: 'function_call', status: 'completed', call_id: 'call_add_1', name: 'calc__add', arguments: '{"a":2,"b":5}' };
    reply = (request) =>
      request.body.input.some((item: any) => item.type === 'function_call_output')
        ? { kind: 'json', body: responsesText('330 m; and 2 + 5 = 7.') }
        : { kind: 'json', body: { ...recordedResponse, output: [searchCall, call] } };
    const response: any = await client.responses.create({ model: 'gpt-5-mini', input: 'Height of the tower, and 2 + 5?', tools: [webSearch, calc] as any });
    assertValidResponseWithMcpItems(response);
    assertValidResponseWithHostedItems(response);
    expect(response.output.map((item: any) => item.type)).toEqual(['mcp_list_tools', 'web_search_call', 'mcp_call', 'message']);
    expect(response.output[1]).toEqual(searchCall);
    expect(response.output[2]).toMatchObject({ name: 'add', output: '7' });
    expect(response.output_text).toBe('330 m; and 2 + 5 = 7.');

    const [firstCall, secondCall] = upstream.requests.map((request) => request.body);
    expect(firstCall.tools.map((tool: any) => tool.type === 'function' ? tool.name : tool.type)).toEqual(['calc__add', 'web_search']);
    expect(secondCall.tools).toEqual(firstCall.tools);
    expect(secondCall.input).toEqual([
      { type: 'message', role: 'user', content: 'Height of the tower, and 2 + 5?' },
      searchCallSentBack,
      { type: 'function_call', call_id: expect.any(String), name: 'calc__add', arguments: '{"a":2,"b":5}' },
      { type: 'function_call_output', call_id: expect.any(String), output: '7' },
    ]);
  });

  it("max_tool_calls bounds the upstream's hosted calls too: it is sent what is left of it, counting the hosted and the gateway's calls made so far, and nothing hosted once it is spent", async () => {
    const calc = { type: 'mcp', server_label: 'calc', server_url: mcpUrl, require_approval: 'never', allowed_tools: ['add'] };
    const call = (n: number) => ({ id: `fc_${n}`, type: 'function_call', status: 'completed', call_id: `call_add_${n}`, name: 'calc__add', arguments: '{"a":2,"b":5}' });
    let turn = 0;
    reply = () => {
      turn++;
      if (turn === 1) return { kind: 'json', body: { ...recordedResponse, output: [searchCall, call(1)] } };
      if (turn === 2) return { kind: 'json', body: { ...recordedResponse, output: [call(2)] } };
      return { kind: 'json', body: responsesText('Done.') };
    };
    const response: any = await client.responses.create({ model: 'gpt-5-mini', input: 'Search, then add twice.', tools: [webSearch, calc] as any, max_tool_calls: 4 });
    assertValidResponseWithMcpItems(response);
    assertValidResponseWithHostedItems(response);
    expect(response.output_text).toBe('Done.');
    const sent = upstream.requests.map((request) => request.body);
    // 4 at first; then 4 less the search and the first add; then less the second add too.
    expect(sent.map((body) => body.max_tool_calls)).toEqual([4, 2, 1]);

    // Spent (a search and an add of 2): the last call is offered no hosted tool, and a hosted choice no longer forces one.
    turn = 0;
    upstream.requests.length = 0;
    const preview = { type: 'web_search_preview' } as const;
    await client.responses.create({ model: 'gpt-5-mini', input: 'Search, then add.', tools: [preview, calc] as any, max_tool_calls: 2, tool_choice: preview });
    expect(upstream.requests[0]!.body).toMatchObject({ tool_choice: preview, max_tool_calls: 2 });
    const spent = upstream.requests.at(-1)!.body;
    expect(upstream.requests.length).toBe(2);
    expect(spent.tools.map((tool: any) => tool.type)).toEqual(['function']);
    expect(spent).not.toHaveProperty('max_tool_calls');
    expect(spent.tool_choice).toBe('auto');
  });

  it('streamed across two turns, hosted and gateway items keep one output_index sequence', async () => {
    const calc = { type: 'mcp', server_label: 'calc', server_url: mcpUrl, require_approval: 'never', allowed_tools: ['add'] };
    const call = { id: 'fc_68c1f0b2', type: 'function_call', status: 'completed', call_id: 'call_add_2', name: 'calc__add', arguments: '{"a":1,"b":1}' };
    const withCall = fixtureText.replace(/"output":\[\{"id":"ws_[^]*?\}\]\,"parallel_tool_calls"/, () => `"output":${JSON.stringify([searchCall, call])},"parallel_tool_calls"`);
    const firstTurn = withCall.slice(0, withCall.indexOf('event: response.output_item.added\ndata: {"type":"response.output_item.added","sequence_number":7'))
      + `event: response.output_item.done\ndata: ${JSON.stringify({ type: 'response.output_item.done', sequence_number: 7, output_index: 1, item: call })}\n\n`
      + withCall.slice(withCall.indexOf('event: response.completed'));
    reply = (request) =>
      // The second turn's search is another call, with its own id.
      request.body.input.some((item: any) => item.type === 'function_call_output') ? { kind: 'sse', pieces: [fixtureText.replaceAll(searchCall.id, 'ws_second_search')] } : { kind: 'sse', pieces: [firstTurn] };
    const stream = await client.responses.create({ model: 'gpt-5-mini', input: 'x', tools: [webSearch, calc] as any, stream: true });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const final = assertEventStreamInvariants(events, assertValidEventWithHostedItems);
    expect(final.output.map((item: any) => item.type)).toEqual(['mcp_list_tools', 'web_search_call', 'mcp_call', 'web_search_call', 'message']);
    const progress = events.filter((event) => event.type === 'response.web_search_call.searching').map((event) => event.output_index);
    expect(progress).toEqual([1, 3]);
  });

  it('models whose upstream does not run web_search still have it omitted (header) — Chat Completions, hostedTools: [], text tool calls, an alias not every deployment of which runs it', async () => {
    for (const model of ['chat-model', 'bare-model', 'text-calls', 'one-does-not']) {
      upstream.requests.length = 0;
      reply = (request) => (request.path.endsWith('/chat/completions') ? textCompletion('Hi') : { kind: 'json', body: responsesText('Hi') });
      const { data, response: http } = await client.responses.create({ model, input: 'x', tools: [webSearch as any] }).withResponse();
      expect(http.headers.get('x-loopgate-omitted-tools'), model).toBe('web_search');
      expect((data as any)['loopgate:omitted_tools'], model).toEqual(['web_search']);
      expect(upstream.requests[0]!.body.tools, model).toBeUndefined();
    }
    upstream.requests.length = 0;
    const { response: http } = await client.responses.create({ model: 'all-run-it', input: 'x', tools: [webSearch as any] }).withResponse();
    expect(http.headers.get('x-loopgate-omitted-tools')).toBeNull();
    expect(upstream.requests[0]!.body.tools).toEqual([webSearch]);
  });

  it('with loop.hostedTools "reject", a model whose upstream runs it is served; one whose upstream does not is refused', async () => {
    const strict = new OpenAI({ baseURL: refusing.baseURL, apiKey: 'k', maxRetries: 0 });
    const served = await strict.responses.create({ model: 'gpt-5-mini', input: 'x', tools: [webSearch as any] });
    expect(served.output[0]).toEqual(searchCall);
    upstream.requests.length = 0;
    const refused = await strict.responses.create({ model: 'chat-model', input: 'x', tools: [webSearch as any] }).catch((error) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused.error).toMatchObject({ code: 'unsupported_tool', param: 'tools[0].type' });
    expect(upstream.requests).toHaveLength(0);
  });

  it('input token counts send the upstream the hosted tools a response would', async () => {
    reply = (request) => (request.path.endsWith('/responses/input_tokens') ? { kind: 'json', body: { object: 'response.input_tokens', input_tokens: 91 } } : { kind: 'json', status: 500, body: {} });
    const counted = await client.responses.inputTokens.count({ model: 'gpt-5-mini', input: 'x', tools: [webSearch as any] });
    expect(counted.input_tokens).toBe(91);
    expect(upstream.requests[0]!.body.tools).toEqual([webSearch]);
  });

  it('a hosted tool with a field of the wrong kind is a 400 naming it; hosted call items resent without an id are too', async () => {
    const badTool = await client.responses.create({ model: 'gpt-5-mini', input: 'x', tools: [{ type: 'web_search', search_context_size: 'huge' } as any] }).catch((error) => error);
    expect(badTool).toBeInstanceOf(OpenAI.BadRequestError);
    expect(badTool.error.param).toMatch(/^tools\[0\]/);
    const badItem = await client.responses.create({ model: 'gpt-5-mini', input: [{ type: 'web_search_call', status: 'completed' }] as any }).catch((error) => error);
    expect(badItem).toBeInstanceOf(OpenAI.BadRequestError);
    expect(badItem.error.param).toMatch(/^input\[0\]/);
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('config: providers.<name>.hostedTools', () => {
  const directory = mkdtempSync(join(tmpdir(), 'loopgate-hosted-'));
  let files = 0;
  const resolve = (provider: Record<string, unknown>) => {
    const path = join(directory, `config-${++files}.jsonc`);
    writeFileSync(path, JSON.stringify({ providers: { r: provider }, defaultProvider: 'r' }));
    return resolveConfig({ LOOPGATE_CONFIG: path });
  };
  const hostedToolsOf = (hostedTools?: unknown) => {
    const resolution = resolve({ type: 'openai-responses', ...(hostedTools !== undefined && { hostedTools }) });
    if (!resolution.ok) throw new Error(resolution.problems.map((problem) => problem.message).join('\n'));
    return (resolution.config.providers.r as { hostedTools?: string[] }).hostedTools;
  };
  const problemsOf = (provider: Record<string, unknown>) => {
    const resolution = resolve(provider);
    return resolution.ok ? [] : resolution.problems.map((problem) => problem.message).join('\n');
  };

  it('defaults to every hosted tool OpenAI runs, takes a subset or none, and refuses unknown or repeated types and other provider types', () => {
    expect(hostedToolsOf()).toEqual(['web_search', 'web_search_2025_08_26', 'web_search_preview', 'web_search_preview_2025_03_11', 'file_search', 'code_interpreter', 'image_generation']);
    expect(hostedToolsOf(['web_search'])).toEqual(['web_search']);
    expect(hostedToolsOf([])).toEqual([]);
    expect(problemsOf({ type: 'openai-responses', hostedTools: ['web_search', 'computer_use_preview'] })).toMatch(/providers\.r\.hostedTools\[1\]/);
    expect(problemsOf({ type: 'openai-responses', hostedTools: ['web_search', 'web_search'] })).toMatch(/providers\.r\.hostedTools.*twice/);
    expect(problemsOf({ type: 'openai-chat', baseUrl: 'http://127.0.0.1:1', hostedTools: ['web_search'] })).toMatch(/providers\.r\.hostedTools is not a known key/);
  });
});
