import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidEventWithMcpItems, assertValidResponse, assertValidResponseWithMcpItems } from '../support/openresponses-schema.ts';
import { flavors, scriptModel } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';

/** A 1×1 PNG, as a browser tool's screenshot would come: base64 in an MCP image part. */
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** An MCP server with a tool that answers as a browser tool does: a line of text and a screenshot (and a kind no model is shown). */
function browserServer(): McpTestServer {
  const server = new McpTestServer();
  server.extraTools.push((mcp) =>
    mcp.registerTool('screenshot', { description: 'Takes a screenshot of the page.', inputSchema: {} }, async () => ({
      content: [
        { type: 'text', text: 'Screenshot of https://example.com:' },
        { type: 'image', data: PIXEL, mimeType: 'image/png' },
        { type: 'image', data: Buffer.from('<svg/>').toString('base64'), mimeType: 'image/svg+xml' },
      ],
    })),
  );
  return server;
}

const ATTACHED_TEXT = ['Screenshot of https://example.com:', '[image 1 (image/png, 70 bytes), attached]', '[image (image/svg+xml, 6 bytes), not shown to the model]'].join('\n');

/** Where a screenshot is in the output, per how operator calls are shown (`mcp.callItems`): the item holding it, its text and its images. */
function shotIn(output: readonly any[], callItems: 'mcp' | 'function'): { item: any; text: string; images: unknown[] } {
  if (callItems === 'function') {
    const item = output.find((entry) => entry.type === 'function_call_output');
    return { item, text: item.output[0].text, images: item.output.slice(1) };
  }
  const item = output.find((entry) => entry.type === 'mcp_call');
  return { item, text: item.output, images: item['loopgate:images'] };
}

const SHOWN_AS = flavors.flatMap((flavor) => (['mcp', 'function'] as const).map((callItems) => ({ ...flavor, callItems })));

describe.each(SHOWN_AS)('images from MCP tools, over $name, operator calls shown as $callItems items', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = browserServer();
  let gateway: RunningGateway;
  let client: OpenAI;
  let serverUrl: string;
  const image = flavor.callItems === 'function' ? { type: 'input_image', image_url: `data:image/png;base64,${PIXEL}`, detail: 'auto' } : { type: 'input_image', image_url: `data:image/png;base64,${PIXEL}` };
  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    serverUrl = mcpUrl;
    gateway = await startGateway(upstreamUrl, { ...flavor.config(upstreamUrl), mcp: { servers: [{ name: 'browser', url: mcpUrl }], callItems: flavor.callItems, allowedUrls: [`${new URL(mcpUrl).origin}/`] } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it("an operator tool's screenshot reaches the model as an image, and the output item holds it after the text; a continuation shows it again", async () => {
    scriptModel(upstream, flavor, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_shot', name: 'browser__screenshot', args: {} }] } : { text: 'I see one pixel.' }));
    const response = await client.responses.create({ model: flavor.model, input: 'What does the page look like?' });
    assertValidResponseWithMcpItems(response);
    expect(response.output_text).toBe('I see one pixel.');
    const shot = shotIn(response.output, flavor.callItems);
    expect(shot.text).toBe(ATTACHED_TEXT);
    expect(shot.images).toEqual([image]);
    // The model's second call was shown the image, in the upstream's own way.
    const shown = JSON.stringify(upstream.requests.at(-1)!.body);
    expect(shown).toContain(PIXEL);
    expect(shown).not.toContain(Buffer.from('<svg/>').toString('base64'));

    // Stored with the response: the next turn's history carries the image too.
    scriptModel(upstream, flavor, () => ({ text: 'Still one pixel.' }));
    const next = await client.responses.create({ model: flavor.model, previous_response_id: response.id, input: 'And now?' });
    assertValidResponse(next);
    expect(next.output_text).toBe('Still one pixel.');
    expect(JSON.stringify(upstream.requests.at(-1)!.body)).toContain(PIXEL);
  });

  it('streamed: the output item carries the image, and every event is valid', async () => {
    scriptModel(upstream, flavor, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_s', name: 'browser__screenshot', args: {} }] } : { text: 'Seen.' }));
    const events: any[] = [];
    for await (const event of await client.responses.create({ model: flavor.model, input: 'Look.', stream: true })) events.push(event);
    assertEventStreamInvariants(events, assertValidEventWithMcpItems);
    const done = events.filter((event) => event.type === 'response.output_item.done').map((event) => event.item);
    expect(shotIn(done, flavor.callItems).images).toEqual([image]);
    expect(events.at(-1).response.output_text ?? events.at(-1).response.output.at(-1).content[0].text).toBe('Seen.');
  });

  it('a server named in the request: its mcp_call carries the screenshot the same way, and the model is shown it', async () => {
    scriptModel(upstream, flavor, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_p', name: 'page__screenshot', args: {} }] } : { text: 'A pixel.' }));
    const response = await client.responses.create({ model: flavor.model, input: 'Look.', tools: [{ type: 'mcp', server_label: 'page', server_url: serverUrl, require_approval: 'never' }] });
    assertValidResponseWithMcpItems(response);
    expect(shotIn(response.output, 'mcp').images).toEqual([{ type: 'input_image', image_url: `data:image/png;base64,${PIXEL}` }]);
    expect(JSON.stringify(upstream.requests.at(-1)!.body)).toContain(PIXEL);
  });

  it('a client resending the items statelessly (store: false) shows the model the image again', async () => {
    scriptModel(upstream, flavor, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_r', name: 'browser__screenshot', args: {} }] } : { text: 'One pixel.' }));
    const response = await client.responses.create({ model: flavor.model, input: 'Look.', store: false });
    scriptModel(upstream, flavor, () => ({ text: 'Still one.' }));
    const resent = response.output.map(({ status: _status, ...item }: any) => item);
    const next = await client.responses.create({ model: flavor.model, store: false, input: [{ role: 'user', content: 'Look.' }, ...resent, { role: 'user', content: 'And now?' }] as any });
    expect(next.output_text).toBe('Still one.');
    expect(JSON.stringify(upstream.requests.at(-1)!.body)).toContain(PIXEL);
  });
});

describe('images from MCP tools that cannot be attached', () => {
  const upstream = new ScriptedChatUpstream();
  const mcp = browserServer();
  let client: OpenAI;
  let gateway: RunningGateway;
  let mcpUrl: string;
  const chat = flavors.find((flavor) => flavor.name === 'openai-chat')!;
  beforeAll(async () => {
    let upstreamUrl: string;
    [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    gateway = await startGateway(upstreamUrl, { mcp: { servers: [{ name: 'browser', url: mcpUrl }], images: 'describe', allowedUrls: [`${new URL(mcpUrl).origin}/`] } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it('mcp.images "describe" (models without vision): the model reads a line of text, and no image travels', async () => {
    scriptModel(upstream, chat, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_d', name: 'browser__screenshot', args: {} }] } : { text: results[0]! }));
    const response = await client.responses.create({ model: 'm', input: 'Look.' });
    assertValidResponseWithMcpItems(response);
    const call = response.output.find((item) => item.type === 'mcp_call')!;
    expect(call).toMatchObject({ output: expect.stringContaining('[image (image/png, 70 bytes), not shown to the model]') });
    expect(call).not.toHaveProperty('loopgate:images');
    expect(JSON.stringify(upstream.requests.at(-1)!.body)).not.toContain(PIXEL);
    expect(upstream.requests.at(-1)!.body.messages.filter((message: any) => message.role === 'user')).toHaveLength(1);
  });

  it('a server named in the request: its mcp_call has only a text output, which says the image was not shown', async () => {
    scriptModel(upstream, chat, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_r', name: 'page__screenshot', args: {} }] } : { text: 'Described.' }));
    const response = await client.responses.create({ model: 'm', input: 'Look.', tools: [{ type: 'mcp', server_label: 'page', server_url: mcpUrl, require_approval: 'never' }] });
    // OpenAI's MCP items are not in the OpenResponses schema; the rest is validated.
    assertValidResponse({ ...response, output: response.output.filter((item) => !item.type.startsWith('mcp_')) });
    const call = response.output.find((item) => item.type === 'mcp_call')!;
    expect(call).toMatchObject({ output: expect.stringContaining('[image (image/png, 70 bytes), not shown to the model]') });
    expect(JSON.stringify(upstream.requests.at(-1)!.body)).not.toContain(PIXEL);
  });
});

describe.each(flavors)('a model without vision (vision: false), over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = browserServer();
  let gateway: RunningGateway;
  let client: OpenAI;
  const NOT_SHOWN = '[image 1 not shown: this model takes no images]';
  const userImage = { type: 'input_image' as const, image_url: `data:image/png;base64,${PIXEL}`, detail: 'auto' as const };
  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    const config = flavor.config(upstreamUrl) as { providers: Record<string, Record<string, unknown>> };
    const [providerName, provider] = Object.entries(config.providers)[0]!;
    // The provider's models take no images; the alias `eyes`, on the same provider, does.
    gateway = await startGateway(upstreamUrl, {
      ...config,
      providers: { ...config.providers, [providerName]: { ...provider, vision: false } },
      models: { eyes: { provider: providerName, model: flavor.model, vision: true } },
      mcp: { servers: [{ name: 'browser', url: mcpUrl }] },
    });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it("a tool's screenshot is told to the model as a line of text, not sent; the stored output keeps the image", async () => {
    scriptModel(upstream, flavor, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_b', name: 'browser__screenshot', args: {} }] } : { text: 'I was told of a screenshot.' }));
    const response = await client.responses.create({ model: flavor.model, input: 'What does the page look like?' });
    assertValidResponseWithMcpItems(response);
    expect(response.output_text).toBe('I was told of a screenshot.');
    const shown = JSON.stringify(upstream.requests.at(-1)!.body);
    expect(shown).not.toContain(PIXEL);
    expect(shown).toContain(NOT_SHOWN);
    const shot = shotIn(response.output, 'mcp');
    expect(shot.text).toBe(ATTACHED_TEXT);
    expect(shot.images).toEqual([{ type: 'input_image', image_url: userImage.image_url }]);
  });

  it('a model entry with vision: true on the same provider is sent the screenshot', async () => {
    scriptModel(upstream, flavor, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_e', name: 'browser__screenshot', args: {} }] } : { text: 'I see one pixel.' }));
    const response = await client.responses.create({ model: 'eyes', input: 'What does the page look like?' });
    assertValidResponseWithMcpItems(response);
    expect(response.output_text).toBe('I see one pixel.');
    expect(JSON.stringify(upstream.requests.at(-1)!.body)).toContain(PIXEL);
  });

  it("an image in the request's own message is a 400 naming the model, and nothing is sent upstream", async () => {
    const before = upstream.requests.length;
    const refused = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: flavor.model, input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, userImage] }] }) });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as any;
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_parameter', param: 'input' });
    expect(body.error.message).toContain('vision: false');
    expect(upstream.requests.length).toBe(before);
  });

  it('a conversation begun with a model that sees goes on with one that does not: the earlier image becomes the line of text', async () => {
    scriptModel(upstream, flavor, () => ({ text: 'A single pixel.' }));
    const first = await client.responses.create({ model: 'eyes', input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, userImage] }] });
    assertValidResponse(first);
    expect(JSON.stringify(upstream.requests.at(-1)!.body)).toContain(PIXEL);
    scriptModel(upstream, flavor, () => ({ text: 'As I was told.' }));
    const next = await client.responses.create({ model: flavor.model, previous_response_id: first.id, input: 'And its colour?' });
    assertValidResponse(next);
    expect(next.output_text).toBe('As I was told.');
    const shown = JSON.stringify(upstream.requests.at(-1)!.body);
    expect(shown).not.toContain(PIXEL);
    expect(shown).toContain(NOT_SHOWN);
  });
});
