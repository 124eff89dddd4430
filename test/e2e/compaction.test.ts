import OpenAI from 'openai';
import type { CompactedResponse, ResponseInputItem } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { COMPACTION_REQUEST, summaryMessageText, UNANSWERED_CALL_OUTPUT } from '../../src/engine/compaction/compaction-prompt.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { parseSseText } from '../support/event-invariants.ts';
import { assertErrorEnvelope, assertValidCompaction, assertValidEvent, assertValidItem, assertValidResponse, assertValidResponseWithOpenAIItems } from '../support/openresponses-schema.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { flavors, type Seen } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, textReply, type RecordedRequest } from '../support/scripted-chat-upstream.ts';

const KEY_ONE = Buffer.alloc(32, 'compaction-key-one').toString('base64');
const KEY_TWO = Buffer.alloc(32, 'compaction-key-two').toString('hex');

/** The compacted output as the SDK types an input list. */
const asInput = (compacted: CompactedResponse) => compacted.output as unknown as ResponseInputItem[];

/** The text of each item of a compacted output: user messages as `user: …`, the compaction item as `compaction`. */
function shapeOf(compacted: CompactedResponse): string[] {
  return compacted.output.map((item) => {
    if (item.type === 'compaction') return 'compaction';
    if (item.type === 'message') return `${item.role}: ${item.content.map((part) => ('text' in part ? part.text : part.type)).join('')}`;
    return item.type;
  });
}

function compactionItemOf(compacted: CompactedResponse): { id: string; type: 'compaction'; encrypted_content: string } {
  const item = compacted.output.at(-1);
  if (item?.type !== 'compaction') throw new Error(`the last item is not a compaction item: ${JSON.stringify(item)}`);
  return item;
}

/** Whether this upstream call is the gateway asking for a summary. */
const asksForSummary = (seen: Seen[]) => seen.at(-1)?.kind === 'user' && (seen.at(-1) as { text: string }).text === COMPACTION_REQUEST;

/** Everything the model was shown as text, one entry per message or block, the system prompt left out. */
const texts = (seen: Seen[]) => seen.flatMap((entry) => (entry.kind === 'user' || entry.kind === 'assistant' ? [`${entry.kind}: ${entry.text}`] : entry.kind === 'result' ? [`result: ${entry.content}`] : []));

/**
 * `client.responses.compact()` of the official SDK against the running
 * gateway, over each upstream API in its own wire format, and the compacted
 * window sent back as the input of the next response.
 */
describe.each(flavors)('compaction over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let mcpUrl: string;
  let gateway: RunningGateway;
  let client: OpenAI;
  let summaries: string[];
  const lastSeen = () => flavor.seen(upstream.requests.at(-1)!);
  const lastBody = () => JSON.stringify(upstream.requests.at(-1)!.body);

  beforeAll(async () => {
    const url = await upstream.start();
    mcpUrl = await mcp.start();
    gateway = await startGateway(url, { ...flavor.config(url), compaction: { key: KEY_ONE }, mcp: { allowedUrls: [`${new URL(mcpUrl).origin}/`] } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    summaries = [];
    // A summary says which it is and what the model was shown; every other call answers "ok".
    upstream.setScript((request: RecordedRequest) => {
      const seen = flavor.seen(request);
      if (!asksForSummary(seen)) return flavor.render(request, { text: 'ok' });
      const summary = `Summary ${summaries.length + 1} of [${texts(seen).slice(0, -1).join(' / ')}]`;
      summaries.push(summary);
      return flavor.render(request, { text: summary });
    });
  });

  it('keeps the user messages in order, then exactly one compaction item; schema-valid, with the upstream usage', async () => {
    const compacted = await client.responses.compact({
      model: flavor.model,
      input: [
        { role: 'user', content: 'My name is Ada.' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello Ada.', annotations: [] }], id: 'msg_assistant1', status: 'completed' },
        { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"src/app.ts"}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'export const answer = 42;' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Rename answer in src/app.ts.' }] },
      ],
      instructions: 'You are a coding agent.',
    });
    assertValidCompaction(compacted);
    expect(compacted.object).toBe('response.compaction');
    expect(compacted.id).toMatch(/^resp_/);
    expect(Math.abs(compacted.created_at - Date.now() / 1000)).toBeLessThan(60);
    expect(shapeOf(compacted)).toEqual(['user: My name is Ada.', 'user: Rename answer in src/app.ts.', 'compaction']);
    for (const item of compacted.output.slice(0, -1)) expect(item).toMatchObject({ type: 'message', role: 'user', status: 'completed', id: expect.stringMatching(/^msg_/) });
    expect(compactionItemOf(compacted).id).toMatch(/^cmp_/);
    expect(compactionItemOf(compacted).encrypted_content).not.toContain('Summary');
    expect(compacted.usage).toEqual({ input_tokens: 10, output_tokens: 5, total_tokens: 15, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } });

    // One model call, no tools, the conversation's instructions as its system prompt and the summary request last.
    expect(upstream.requests).toHaveLength(1);
    const sent = upstream.requests[0]!.body;
    expect(sent.tools).toBeUndefined();
    expect(lastSeen()).toEqual([
      { kind: 'system', text: 'You are a coding agent.' },
      { kind: 'user', text: 'My name is Ada.' },
      { kind: 'assistant', text: 'Hello Ada.' },
      { kind: 'call', id: 'call_1', name: 'read_file', args: { path: 'src/app.ts' } },
      { kind: 'result', id: 'call_1', content: 'export const answer = 42;' },
      { kind: 'user', text: 'Rename answer in src/app.ts.' },
      { kind: 'user', text: COMPACTION_REQUEST },
    ]);
  });

  it('a call the window leaves unanswered is closed for the summarising call, so the upstream sees every call answered', async () => {
    const compacted = await client.responses.compact({ model: flavor.model, input: [{ role: 'user', content: 'List the files.' }, { type: 'function_call', call_id: 'call_open', name: 'ls', arguments: '{}' }] });
    expect(shapeOf(compacted)).toEqual(['user: List the files.', 'compaction']);
    expect(lastSeen().slice(1)).toEqual([
      { kind: 'call', id: 'call_open', name: 'ls', args: {} },
      { kind: 'result', id: 'call_open', content: UNANSWERED_CALL_OUTPUT },
      { kind: 'user', text: COMPACTION_REQUEST },
    ]);
  });

  it('compacts a stored multi-turn conversation named by previous_response_id, then the input; kept messages keep their stored ids', async () => {
    const first = await client.responses.create({ model: flavor.model, input: 'I am Ada and I work on parser.ts.' });
    const second = await client.responses.create({ model: flavor.model, previous_response_id: first.id, input: 'The bug is in tokenize().' });
    const compacted = await client.responses.compact({ model: flavor.model, previous_response_id: second.id, input: 'Fix it next.' });
    assertValidCompaction(compacted);
    expect(shapeOf(compacted)).toEqual(['user: I am Ada and I work on parser.ts.', 'user: The bug is in tokenize().', 'user: Fix it next.', 'compaction']);
    const [firstInput] = (await client.responses.inputItems.list(first.id)).data;
    expect(compacted.output[0]!.id).toBe(firstInput!.id);
    expect(texts(lastSeen())).toEqual(['user: I am Ada and I work on parser.ts.', 'assistant: ok', 'user: The bug is in tokenize().', 'assistant: ok', 'user: Fix it next.', `user: ${COMPACTION_REQUEST}`]);
    expect(summaries).toEqual(['Summary 1 of [user: I am Ada and I work on parser.ts. / assistant: ok / user: The bug is in tokenize(). / assistant: ok / user: Fix it next.]']);
  });

  it('round trip: the compacted output as the next input shows the model the kept messages and the summary, never the ciphertext; it is stored as sent and inherited', async () => {
    const compacted = await client.responses.compact({ model: flavor.model, input: [{ role: 'user', content: 'Deploy to eu-west-1 only.' }, { role: 'assistant', content: 'Noted: eu-west-1.' }] });
    const item = compactionItemOf(compacted);
    const next = await client.responses.create({ model: flavor.model, input: [...asInput(compacted), { role: 'user', content: 'Where do we deploy?' }] });
    assertValidResponse(next);
    expect(next.output_text).toBe('ok');
    const summaryText = summaryMessageText(summaries[0]!);
    expect(texts(lastSeen())).toEqual(['user: Deploy to eu-west-1 only.', `user: ${summaryText}`, 'user: Where do we deploy?']);
    expect(lastBody()).not.toContain(item.encrypted_content);

    // The stored input keeps the compaction item exactly as sent.
    const listed = (await client.responses.inputItems.list(next.id, { order: 'asc' })).data;
    for (const entry of listed) assertValidItem(entry);
    expect(listed.map((entry) => entry.type)).toEqual(['message', 'compaction', 'message']);
    expect(listed[1]).toEqual({ id: item.id, type: 'compaction', encrypted_content: item.encrypted_content });

    // Inherited through previous_response_id, the item is expanded again.
    await client.responses.create({ model: flavor.model, previous_response_id: next.id, input: 'And the region again?' });
    expect(texts(lastSeen())).toEqual(['user: Deploy to eu-west-1 only.', `user: ${summaryText}`, 'user: Where do we deploy?', 'assistant: ok', 'user: And the region again?']);
    expect(lastBody()).not.toContain(item.encrypted_content);

    // Without an id, as ResponseCompactionItemParam allows.
    await client.responses.create({ model: flavor.model, input: [{ type: 'compaction', encrypted_content: item.encrypted_content }, { role: 'user', content: 'Still there?' }] });
    expect(texts(lastSeen())).toEqual([`user: ${summaryText}`, 'user: Still there?']);
  });

  it('re-compacting: an earlier compaction item is expanded for the model and folded into exactly one new item', async () => {
    const once = await client.responses.compact({ model: flavor.model, input: [{ role: 'user', content: 'Use tabs.' }, { role: 'assistant', content: 'Tabs it is.' }] });
    const twice = await client.responses.compact({ model: flavor.model, input: [...asInput(once), { role: 'user', content: 'Also 100 columns.' }, { role: 'assistant', content: 'Noted.' }] });
    assertValidCompaction(twice);
    expect(shapeOf(twice)).toEqual(['user: Use tabs.', 'user: Also 100 columns.', 'compaction']);
    expect(texts(lastSeen())).toEqual(['user: Use tabs.', `user: ${summaryMessageText(summaries[0]!)}`, 'user: Also 100 columns.', 'assistant: Noted.', `user: ${COMPACTION_REQUEST}`]);
    expect(compactionItemOf(twice).encrypted_content).not.toBe(compactionItemOf(once).encrypted_content);

    await client.responses.create({ model: flavor.model, input: [...asInput(twice), { role: 'user', content: 'Format it.' }] });
    expect(texts(lastSeen())).toEqual(['user: Use tabs.', 'user: Also 100 columns.', `user: ${summaryMessageText(summaries[1]!)}`, 'user: Format it.']);
  });

  it.each([false, true])('compaction_trigger last in the input (Codex compacts so against OpenAI): a response whose one output item seals the window; it opens in the next response (streamed: %s)', async (stream) => {
    const window: ResponseInputItem[] = [
      { role: 'user', content: 'Deploy to eu-west-1 only.' },
      { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"deploy.yml"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'region: eu-west-1' },
      { role: 'assistant', content: 'Noted: eu-west-1.' },
    ];
    const tools = [{ type: 'function' as const, name: 'read_file', parameters: { type: 'object', properties: {} }, strict: false }];
    const body = { model: flavor.model, store: false, tools, input: [...window, { type: 'compaction_trigger' as const }] };
    let response: OpenAI.Responses.Response;
    if (stream) {
      const answer = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, stream: true }) });
      expect(answer.status).toBe(200);
      const { events } = parseSseText(await answer.text());
      for (const event of events) assertValidEvent(event);
      expect(events.map((event) => event.type)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.output_item.done', 'response.completed']);
      response = events.at(-1)!.response;
    } else {
      response = await client.responses.create(body);
    }
    assertValidResponse(response);
    expect(response.status).toBe('completed');
    expect(response.output).toHaveLength(1);
    const item = response.output[0] as { id: string; type: string; encrypted_content: string };
    expect(item).toEqual({ id: expect.stringMatching(/^cmp_/), type: 'compaction', encrypted_content: expect.any(String) });
    expect(response.usage).toMatchObject({ input_tokens: 10, output_tokens: 5 });
    // One summarising call, offered no tools, the window's open calls answered.
    expect(upstream.requests).toHaveLength(1);
    expect(flavor.offeredTools(upstream.requests[0]!)).toEqual([]);
    expect(texts(lastSeen())).toEqual(['user: Deploy to eu-west-1 only.', 'result: region: eu-west-1', 'assistant: Noted: eu-west-1.', `user: ${COMPACTION_REQUEST}`]);
    expect(item.encrypted_content).not.toContain('Summary');

    // The client's next input starts from the item: the model sees the summary, never the ciphertext.
    await client.responses.create({ model: flavor.model, input: [{ role: 'user', content: 'Deploy to eu-west-1 only.' }, item as unknown as ResponseInputItem, { role: 'user', content: 'Where do we deploy?' }] });
    expect(texts(lastSeen())).toEqual(['user: Deploy to eu-west-1 only.', `user: ${summaryMessageText(summaries[0]!)}`, 'user: Where do we deploy?']);
    expect(lastBody()).not.toContain(item.encrypted_content);
  });

  it('compaction_trigger in a stored conversation: the next turn by previous_response_id starts from the summary, not the window again', async () => {
    const first = await client.responses.create({ model: flavor.model, input: 'I am Ada and I work on parser.ts.' });
    const compacted = await client.responses.create({ model: flavor.model, previous_response_id: first.id, input: [{ role: 'user', content: 'Compact now.' }, { type: 'compaction_trigger' }] });
    expect(compacted.output.map((item) => item.type)).toEqual(['compaction']);
    // The trigger asked for the compaction: it is no input item of the response (none of OpenAI's item kinds, nor the schema's).
    const listed = await client.responses.inputItems.list(compacted.id);
    expect(listed.data.map((item) => item.type)).toEqual(['message']);
    for (const item of listed.data) assertValidItem(item);
    await client.responses.create({ model: flavor.model, previous_response_id: compacted.id, input: 'Who am I?' });
    expect(texts(lastSeen())).toEqual([`user: ${summaryMessageText(summaries[0]!)}`, 'user: Who am I?']);
  });

  it('compaction_trigger continuing a paused turn: the one compaction item, no closing output; the next turn by previous_response_id sends no orphan result', async () => {
    const tools = [{ type: 'function' as const, name: 'ask_user', parameters: { type: 'object', properties: {} }, strict: false }];
    upstream.setScript((request: RecordedRequest) => {
      const seen = flavor.seen(request);
      if (asksForSummary(seen)) return flavor.render(request, { text: `Summary ${summaries.push('s')} of the paused work` });
      return seen.some((entry) => entry.kind === 'user' && entry.text === 'Ask me.') && !seen.some((entry) => entry.kind === 'call') ? flavor.render(request, { calls: [{ id: 'call_ask', name: 'ask_user', args: {} }] }) : flavor.render(request, { text: 'ok' });
    });
    const paused = await client.responses.create({ model: flavor.model, input: 'Ask me.', tools });
    assertValidResponse(paused);
    expect(paused.output.map((item) => item.type)).toEqual(['function_call']);
    const compacted = await client.responses.create({ model: flavor.model, previous_response_id: paused.id, tools, input: [{ type: 'compaction_trigger' }] });
    assertValidResponseWithOpenAIItems(compacted);
    expect(compacted.output.map((item) => item.type)).toEqual(['compaction']);
    assertValidResponse(await client.responses.create({ model: flavor.model, previous_response_id: compacted.id, tools, input: 'Go on.' }));
    expect(lastSeen().filter((entry) => entry.kind === 'result' || entry.kind === 'call')).toEqual([]);
    expect(texts(lastSeen()).at(-1)).toBe('user: Go on.');
  });

  it('an answer to a call a compaction_trigger compacted away is a 400 unknown_call_id, by previous_response_id and in a Conversation: no result without its call reaches the upstream', async () => {
    const tools = [{ type: 'function' as const, name: 'ask_user', parameters: { type: 'object', properties: {} }, strict: false }];
    upstream.setScript((request: RecordedRequest) => {
      const seen = flavor.seen(request);
      if (asksForSummary(seen)) return flavor.render(request, { text: `Summary ${summaries.push('s')} of the paused work` });
      return seen.some((entry) => entry.kind === 'call') || seen.some((entry) => entry.kind === 'user' && entry.text.startsWith('Summary')) ? flavor.render(request, { text: 'ok' }) : flavor.render(request, { calls: [{ id: 'call_gone', name: 'ask_user', args: {} }] });
    });
    const answer = [{ type: 'function_call_output' as const, call_id: 'call_gone', output: 'yes' }];
    const refusedAnswer = async (request: Record<string, unknown>) => {
      const calls = upstream.requests.length;
      const error = await client.responses.create({ model: flavor.model, tools, input: answer, ...request }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      const refused = (error as InstanceType<typeof OpenAI.BadRequestError>).error;
      assertErrorEnvelope({ error: refused });
      expect(refused).toMatchObject({ code: 'unknown_call_id', param: 'input[0].call_id' });
      expect(upstream.requests).toHaveLength(calls);
    };

    const paused = await client.responses.create({ model: flavor.model, input: 'Ask me.', tools });
    expect(paused.output.map((item) => item.type)).toEqual(['function_call']);
    const compacted = await client.responses.create({ model: flavor.model, previous_response_id: paused.id, tools, input: [{ type: 'compaction_trigger' }] });
    expect(compacted.output.map((item) => item.type)).toEqual(['compaction']);
    await refusedAnswer({ previous_response_id: compacted.id });

    const conversation = await client.conversations.create({});
    await client.responses.create({ model: flavor.model, conversation: conversation.id, input: 'Ask me.', tools });
    await client.responses.create({ model: flavor.model, conversation: conversation.id, tools, input: [{ type: 'compaction_trigger' }] });
    await refusedAnswer({ conversation: conversation.id });
  });

  it('a compaction_trigger naming an MCP server among its tools: the one compaction item, the server never asked for its tools', async () => {
    const lists = mcp.listCalls;
    const first = await client.responses.create({ model: flavor.model, input: 'I am Ada.' });
    const request = { model: flavor.model, previous_response_id: first.id, tools: [{ type: 'mcp' as const, server_label: 'srv', server_url: mcpUrl, require_approval: 'never' as const }], input: [{ type: 'compaction_trigger' as const }] };
    const compacted = await client.responses.create(request as any);
    assertValidResponseWithOpenAIItems(compacted);
    expect(compacted.output.map((item) => item.type)).toEqual(['compaction']);
    const { events } = parseSseText(await (await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...request, stream: true }) })).text());
    for (const event of events) assertValidEvent(event);
    expect(events.filter((event) => event.type === 'response.output_item.done').map((event) => (event as unknown as { item: { type: string } }).item.type)).toEqual(['compaction']);
    expect(mcp.listCalls).toBe(lists);
  });

  it('compaction_trigger inside a Conversation: its summary stands for everything before it there too, and the trigger is no item of the conversation', async () => {
    const conversation = await client.conversations.create({});
    await client.responses.create({ model: flavor.model, conversation: conversation.id, input: 'I am Ada.' });
    await client.responses.create({ model: flavor.model, conversation: conversation.id, input: 'I work on parser.ts.' });
    const compacted = await client.responses.create({ model: flavor.model, conversation: conversation.id, input: [{ type: 'compaction_trigger' }] });
    assertValidResponseWithOpenAIItems(compacted);
    expect(compacted.output.map((item) => item.type)).toEqual(['compaction']);
    assertValidResponse(await client.responses.create({ model: flavor.model, conversation: conversation.id, input: 'Who am I?' }));
    expect(texts(lastSeen())).toEqual([`user: ${summaryMessageText(summaries[0]!)}`, 'user: Who am I?']);
    const listed = await client.conversations.items.list(conversation.id, { order: 'asc' });
    expect(listed.data.map((item) => item.type)).not.toContain('compaction_trigger');
  });

  it("a compacted window added to a Conversation whole keeps the user messages the window kept: the model sees them, then the summary", async () => {
    const compacted = await client.responses.compact({ model: flavor.model, input: [{ role: 'user', content: 'I am Ada.' }, { role: 'assistant', content: 'Hello Ada.' }, { role: 'user', content: 'I work on parser.ts.' }] } as any);
    expect(compacted.output.map((item: any) => item.type)).toEqual(['message', 'message', 'compaction']);
    const conversation = await client.conversations.create({ items: [{ role: 'user', content: 'An old question.' }, { role: 'assistant', content: 'An old answer.' }, ...(compacted.output as any[])] });
    assertValidResponse(await client.responses.create({ model: flavor.model, conversation: conversation.id, input: 'Who am I?' }));
    // As the same window sent as input shows it; what came before the window is gone.
    expect(texts(lastSeen())).toEqual(['user: I am Ada.', 'user: I work on parser.ts.', `user: ${summaryMessageText(summaries.at(-1)!)}`, 'user: Who am I?']);
  });

  it("a compacted window a response adds to its Conversation cuts the history on that turn already, as on the next", async () => {
    const compacted = await client.responses.compact({ model: flavor.model, input: [{ role: 'user', content: 'I am Ada.' }, { role: 'assistant', content: 'Hello Ada.' }, { role: 'user', content: 'I work on parser.ts.' }] } as any);
    const older = () => client.conversations.create({ items: [{ role: 'user', content: 'An old question.' }, { role: 'assistant', content: 'An old answer.' }] });
    const summary = `user: ${summaryMessageText(summaries.at(-1)!)}`;
    const conversation = await older();
    assertValidResponse(await client.responses.create({ model: flavor.model, conversation: conversation.id, input: [...(compacted.output as any[]), { role: 'user', content: 'Who am I?' }] }));
    expect(texts(lastSeen())).toEqual(['user: I am Ada.', 'user: I work on parser.ts.', summary, 'user: Who am I?']);
    assertValidResponse(await client.responses.create({ model: flavor.model, conversation: conversation.id, input: 'And now?' }));
    expect(texts(lastSeen())).toEqual(['user: I am Ada.', 'user: I work on parser.ts.', summary, 'user: Who am I?', 'assistant: ok', 'user: And now?']);
    // The compaction item alone: nothing of the conversation before it is kept.
    assertValidResponse(await client.responses.create({ model: flavor.model, conversation: (await older()).id, input: [compactionItemOf(compacted) as any, { role: 'user', content: 'And now?' }] }));
    expect(texts(lastSeen())).toEqual([summary, 'user: And now?']);
  });

  it('an upstream failure is the error envelope with the status POST /v1/responses gives it', async () => {
    const { reply, status } = flavor.failAtOnce();
    upstream.setScript(() => reply);
    const body = JSON.stringify({ model: flavor.model, input: 'Summarise me.' });
    const [compact, create] = await Promise.all(
      ['/responses/compact', '/responses'].map((path) => fetch(`${gateway.baseURL}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })),
    );
    expect(compact!.status).toBe(status);
    expect(create!.status).toBe(status);
    const [compactError, createError] = [await compact!.json(), await create!.json()];
    assertErrorEnvelope(compactError);
    expect(compactError).toEqual(createError);
    expect(compact!.headers.get('x-request-id')).toMatch(/^req_/);
    await expect(client.responses.compact({ model: flavor.model, input: 'x' })).rejects.toBeInstanceOf(OpenAI.APIError);
  });
});

/** Compaction items that must not open, and the parameters the endpoint checks, all before any model call. */
describe('compaction items that do not open, and compact request checks', () => {
  const upstream = new ScriptedChatUpstream();
  const TENANT_A = 'sk-compaction-tenant-a';
  const TENANT_B = 'sk-compaction-tenant-b';
  let upstreamUrl: string;
  let gateway: RunningGateway;
  let other: RunningGateway;
  const as = (running: RunningGateway, apiKey = TENANT_A) => new OpenAI({ baseURL: running.baseURL, apiKey, maxRetries: 0 });

  beforeAll(async () => {
    upstreamUrl = await upstream.start();
    const auth = { apiKeys: [{ key: TENANT_A, tenant: 'team-a' }, { key: TENANT_B, tenant: 'team-b' }] };
    gateway = await startGateway(upstreamUrl, { auth, compaction: { key: KEY_ONE } });
    other = await startGateway(upstreamUrl, { auth, compaction: { key: KEY_TWO } });
  });
  afterAll(async () => {
    await Promise.all([gateway.close(), other.close()]);
    await upstream.close();
  });
  beforeEach(() => {
    upstream.setScript(textReply('A summary.'));
  });

  async function refusal(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.BadRequestError>> {
    const error = await promise.then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    return error as InstanceType<typeof OpenAI.BadRequestError>;
  }

  /** A compaction item made by `running` for the tenant of `apiKey`. */
  async function itemFrom(running: RunningGateway, apiKey = TENANT_A): Promise<{ type: 'compaction'; id: string; encrypted_content: string }> {
    return compactionItemOf(await as(running, apiKey).responses.compact({ model: 'gpt-test', input: 'Remember: the password hint is "blue".' }));
  }

  /** `item` sent as the fourth input item: refused with a 400 naming it, before any model call. */
  async function expectRefused(item: { type: 'compaction'; encrypted_content: string }, mentions: RegExp, client = as(gateway)): Promise<void> {
    const calls = upstream.requests.length;
    for (const send of [
      () => client.responses.create({ model: 'gpt-test', input: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }, item, { role: 'user', content: 'd' }] }),
      () => client.responses.compact({ model: 'gpt-test', input: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }, item] }),
    ]) {
      const error = await refusal(send());
      expect(error.code).toBe('invalid_encrypted_content');
      expect(error.param).toBe('input[3].encrypted_content');
      expect(error.message).toMatch(mentions);
    }
    expect(upstream.requests.length).toBe(calls);
  }

  it('an item altered anywhere, or cut short, is a 400 naming it', async () => {
    const item = await itemFrom(gateway);
    const sealed = item.encrypted_content;
    const flip = (text: string, at: number) => `${text.slice(0, at)}${text[at] === 'A' ? 'B' : 'A'}${text.slice(at + 1)}`;
    for (const at of [0, 3, 12, Math.floor(sealed.length / 2), sealed.length - 2]) await expectRefused({ ...item, encrypted_content: flip(sealed, at) }, /cannot be used/);
    await expectRefused({ ...item, encrypted_content: sealed.slice(0, -4) }, /altered or truncated/);
    await expectRefused({ ...item, encrypted_content: sealed.slice(0, 20) }, /malformed or truncated/);
    await expectRefused({ ...item, encrypted_content: 'gAAAAABpM0Yj-not-ours=' }, /not a compaction item made by this gateway/);
    // Every other last character too, though some decode to the same bytes (its spare bits are ignored by base64 decoding).
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (const last of alphabet.replace(sealed.at(-1)!, '')) await expectRefused({ ...item, encrypted_content: sealed.slice(0, -1) + last }, /cannot be used/);
    // The untouched item still works.
    await as(gateway).responses.create({ model: 'gpt-test', input: [item, { role: 'user', content: 'ok?' }] });
  });

  it('an item sealed under another gateway\'s key is a 400 that says so', async () => {
    await expectRefused(await itemFrom(other), /another compaction key/);
  });

  it("another tenant's item is a 400, though the key is the same", async () => {
    const item = await itemFrom(gateway, TENANT_B);
    await expectRefused(item, /another tenant/);
    await as(gateway, TENANT_B).responses.create({ model: 'gpt-test', input: [item, { role: 'user', content: 'mine' }] });
  });

  it("an item that does not open is refused as it is added to a conversation (kept, it would fail every later response there), on create and on adding items", async () => {
    const client = as(gateway);
    const foreign = await itemFrom(gateway, TENANT_B);
    const altered = { ...foreign, encrypted_content: `A${foreign.encrypted_content.slice(1)}` };
    for (const item of [foreign, altered]) {
      const onCreate = await refusal(client.conversations.create({ items: [{ role: 'user', content: 'hi' }, item as never] }));
      expect(onCreate).toMatchObject({ code: 'invalid_encrypted_content', param: 'items[1].encrypted_content' });
      const conversation = await client.conversations.create({});
      const onAdd = await refusal(client.conversations.items.create(conversation.id, { items: [item as never] }));
      expect(onAdd).toMatchObject({ code: 'invalid_encrypted_content', param: 'items[0].encrypted_content' });
      expect((await client.conversations.items.list(conversation.id)).data).toEqual([]);
    }
    // The tenant's own item goes in, and the conversation goes on from it.
    const own = await itemFrom(gateway);
    const conversation = await client.conversations.create({ items: [own as never] });
    await client.responses.create({ model: 'gpt-test', conversation: conversation.id, input: 'and now?' });
  });

  it('a compaction_trigger that is not the last input item is a 400 naming it, before any model call', async () => {
    const calls = upstream.requests.length;
    const error = await refusal(as(gateway).responses.create({ model: 'gpt-test', input: [{ role: 'user', content: 'x' }, { type: 'compaction_trigger' }, { role: 'user', content: 'y' }] }));
    expect(error).toMatchObject({ param: 'input[1]', code: 'invalid_value' });
    expect(error.message).toContain('final input item');
    expect(upstream.requests.length).toBe(calls);
  });

  it('model is required; unknown parameters, unsupported ones and an empty window are 400s naming them', async () => {
    const post = (body: unknown) => fetch(`${gateway.baseURL}/responses/compact`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TENANT_A}` }, body: JSON.stringify(body) });
    const cases: [unknown, string, string][] = [
      [{ input: 'x' }, 'model', 'missing_required_parameter'],
      [{ model: 'gpt-test', input: 'x', tools: [] }, 'tools', 'unknown_parameter'],
      [{ model: 'gpt-test', input: 'x', image: { context_compression: 'enabled' } }, 'image', 'unsupported_parameter'],
      [{ model: 'gpt-test' }, 'input', 'missing_required_parameter'],
      [{ model: 'gpt-test', input: [{ type: 'compaction' }] }, 'input[0].encrypted_content', 'missing_required_parameter'],
    ];
    for (const [body, param, code] of cases) {
      const response = await post(body);
      const error = await response.json();
      expect(response.status, JSON.stringify(body)).toBe(400);
      assertErrorEnvelope(error);
      expect(error.error).toMatchObject({ type: 'invalid_request_error', param, code });
    }
    const missing = await refusal(as(gateway).responses.compact({ input: 'x' } as never));
    expect(missing).toMatchObject({ param: 'model', code: 'missing_required_parameter' });
    const notFound = await as(gateway).responses.compact({ model: 'gpt-test', previous_response_id: 'resp_missing' }).catch((error: unknown) => error);
    expect(notFound).toBeInstanceOf(OpenAI.NotFoundError);
    expect((notFound as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('previous_response_not_found');
  });

  it('a summary cut short, or empty, is a 502 that says so, not a compaction item', async () => {
    const completion = (content: string, finish: string) => () => ({ kind: 'json' as const, body: { choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: finish }], usage: { prompt_tokens: 3, completion_tokens: 1 } } });
    for (const [script, code] of [
      [completion('The user wants', 'length'), 'summary_truncated'],
      [completion('  ', 'stop'), 'summary_empty'],
    ] as const) {
      upstream.setScript(script);
      const error = await as(gateway).responses.compact({ model: 'gpt-test', input: 'x' }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect(error).toMatchObject({ status: 502, code });
    }
  });

  it('without a configured key: a warning at start, and items do not survive a restart', async () => {
    const lines: { level: number; msg: string }[] = [];
    const first = await startGateway(upstreamUrl, { logLevel: 'warn' }, {}, [], { write: (line: string) => lines.push(JSON.parse(line)) });
    let item: { type: 'compaction'; encrypted_content: string };
    try {
      const warning = lines.find((line) => line.msg.startsWith('compaction:'));
      expect(warning).toMatchObject({ level: 40 });
      expect(warning!.msg).toMatch(/random key was generated: compaction items will not survive a restart, and replicas must share one key/);
      item = await itemFrom(first);
      await as(first).responses.create({ model: 'gpt-test', input: [item, { role: 'user', content: 'still here' }] });
    } finally {
      await first.close();
    }
    const restarted = await startGateway(upstreamUrl, { logLevel: 'silent' });
    try {
      const error = await refusal(as(restarted).responses.create({ model: 'gpt-test', input: [item, { role: 'user', content: 'after the restart' }] }));
      expect(error).toMatchObject({ code: 'invalid_encrypted_content', param: 'input[0].encrypted_content' });
    } finally {
      await restarted.close();
    }
    // A configured key logs no such warning.
    const quiet: { msg: string }[] = [];
    const configured = await startGateway(upstreamUrl, { logLevel: 'warn', compaction: { key: KEY_ONE } }, {}, [], { write: (line: string) => quiet.push(JSON.parse(line)) });
    await configured.close();
    expect(quiet.filter((line) => line.msg.startsWith('compaction:'))).toEqual([]);
  });
});
