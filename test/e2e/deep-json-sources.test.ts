import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_LIMITS } from '../../src/protocol/request-limits.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponseWithOpenAIItems } from '../support/openresponses-schema.ts';
import { flavors, type ProviderFlavor } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/** Levels where JSON.stringify overflows the stack (it recurses); the request's own depth check never sees these values. */
const LEVELS = 20_000;
const deepSchemaJson = `${'{"type":"object","properties":{"a":'.repeat(LEVELS)}{"type":"string"}${'}}'.repeat(LEVELS)}`;
const deepArguments = `{"a":${'['.repeat(LEVELS)}${']'.repeat(LEVELS)}}`;
const PLACEHOLDER = '{"__deep__":1}';

/**
 * A hostile MCP server: speaks just enough JSON-RPC over Streamable HTTP
 * (JSON replies) to list two tools, one with an input schema nested twenty
 * thousand levels deep. Written by hand because the official SDK's server
 * cannot serialise such a schema itself.
 */
class DeepSchemaMcpServer {
  readonly calls: string[] = [];
  #http: Server | null = null;

  async start(): Promise<string> {
    this.#http = createServer(async (req, res) => {
      let raw = '';
      for await (const piece of req) raw += piece;
      const message = raw ? (JSON.parse(raw) as { id?: unknown; method: string; params?: any }) : null;
      if (!message || message.id === undefined) return void res.writeHead(202).end();
      let result = '{}';
      if (message.method === 'initialize') result = JSON.stringify({ protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'deep', version: '1.0.0' } });
      if (message.method === 'tools/list') {
        result = `{"tools":[{"name":"deep","inputSchema":{"type":"object","properties":{"x":${deepSchemaJson}}}},{"name":"echo","description":"Echoes.","inputSchema":{"type":"object","properties":{"a":{}}}}]}`;
      }
      if (message.method === 'tools/call') {
        this.calls.push(String(message.params?.name));
        result = '{"content":[{"type":"text","text":"echoed"}]}';
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${result}}`);
    });
    await new Promise<void>((resolve) => this.#http!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#http.address() as AddressInfo).port}/mcp`;
  }

  async close(): Promise<void> {
    this.#http?.closeAllConnections();
    await new Promise<void>((resolve) => (this.#http ? this.#http.close(() => resolve()) : resolve()));
  }
}

/**
 * `reply` with the placeholder arguments swapped for `text` (the flavors serialise arguments themselves, which deep ones would overflow):
 * inside a JSON string where the upstream sends arguments as text, as raw JSON where it sends an object (Gemini).
 * A JSON body stays text, as the upstream would send it: serialising it again would overflow here.
 */
function withArguments(reply: UpstreamReply, text: string): UpstreamReply {
  const swap = (wire: string) => wire.replaceAll(JSON.stringify(PLACEHOLDER).slice(1, -1), JSON.stringify(text).slice(1, -1)).replaceAll(PLACEHOLDER, text);
  if (reply.kind === 'sse') return { ...reply, pieces: reply.pieces.map(swap) };
  if (reply.kind === 'json') return { ...reply, body: swap(JSON.stringify(reply.body)) };
  return reply;
}

/** A model that calls `name` with deeply nested arguments, then answers with the results it saw. */
function callingDeeply(flavor: ProviderFlavor, name: string): (request: RecordedRequest) => UpstreamReply {
  return (request) => {
    const results = flavor.seen(request).flatMap((seen) => (seen.kind === 'result' ? [seen.content] : []));
    if (results.length > 0) return flavor.render(request, { text: `saw ${results.join(' | ')}` });
    return withArguments(flavor.render(request, { calls: [{ id: 'call_deep', name, args: JSON.parse(PLACEHOLDER) }] }), deepArguments);
  };
}

describe.each(flavors)('JSON nested past the limit from outside the request never overflows ($name)', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new DeepSchemaMcpServer();
  let gateway: RunningGateway;
  let mcpTool: Record<string, unknown>;
  const post = async (body: Record<string, unknown>) => {
    const response = await gateway.app.inject({ method: 'POST', url: '/v1/responses', payload: { model: flavor.model, ...body } });
    return { status: response.statusCode, body: response.body.startsWith('{') ? (response.json() as any) : response.body };
  };
  const offered = (request: RecordedRequest): string[] => flavor.offeredTools(request).map((tool) => tool.name);

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    mcpTool = { type: 'mcp', server_label: 'srv', server_url: mcpUrl, require_approval: 'never' };
    gateway = await startGateway(upstreamUrl, { ...flavor.config(upstreamUrl), mcp: { allowedUrls: [`${new URL(mcpUrl).origin}/`] } });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it(`a request nested ${REQUEST_LIMITS.maxJsonDepth} levels deep wherever it can nest is answered streamed and not, stored, and read back`, async () => {
    upstream.setScript((request) => flavor.render(request, { text: '{"a":"fine"}' }));
    const max = REQUEST_LIMITS.maxJsonDepth;
    /** Arrays nested `levels` deep. */
    const arrays = (levels: number): unknown => (levels === 1 ? [] : [arrays(levels - 1)]);
    /** An object schema nested `levels` objects deep ({type, properties: {a: …}}): 2 × levels + 1 levels of JSON. */
    const schema = (levels: number): unknown => (levels === 0 ? { type: 'string' } : { type: 'object', properties: { a: schema(levels - 1) } });
    const levelsBelow = (depthOfParent: number) => (max - depthOfParent - 1) / 2;
    const body = {
      // body → tools → tools[0] → parameters, and body → text → format → schema: three levels above each schema.
      tools: [{ type: 'function', name: 'f', parameters: schema(levelsBelow(3)) }],
      text: { format: { type: 'json_schema', name: 'out', schema: schema(levelsBelow(3)) } },
      client_metadata: { a: arrays(max - 2) },
      input: [
        { role: 'user', content: 'x' },
        { type: 'function_call', call_id: 'call_f', name: 'f', arguments: JSON.stringify({ a: arrays(max - 1) }) },
        { type: 'function_call_output', call_id: 'call_f', output: 'ok' },
        { type: 'tool_search_call', call_id: 'call_s', arguments: { a: arrays(max - 4) }, execution: 'client' },
        { type: 'tool_search_output', call_id: 'call_s', execution: 'client', tools: [] },
      ],
    };
    for (const stream of [false, true]) {
      const answer = await post({ ...body, stream });
      expect(answer.status).toBe(200);
      const response = stream ? JSON.parse(/event: response\.completed\ndata: (.*)\n/.exec(answer.body)![1]!).response : answer.body;
      assertValidResponseWithOpenAIItems(response);
      const sent = JSON.stringify(upstream.requests.at(-1)!.body);
      expect(sent).toContain(JSON.stringify(schema(levelsBelow(3))));
      const stored = await gateway.app.inject({ method: 'GET', url: `/v1/responses/${response.id}` });
      expect(stored.statusCode).toBe(200);
      expect(stored.json().tools[0].parameters).toEqual(schema(levelsBelow(3)));
      const items = await gateway.app.inject({ method: 'GET', url: `/v1/responses/${response.id}/input_items?order=asc` });
      expect(items.statusCode).toBe(200);
      expect(items.json().data.map((item: any) => item.type)).toEqual(['message', 'function_call', 'function_call_output', 'tool_search_call', 'tool_search_output']);
    }
    // One level more in any of these places is refused before anything reads it.
    const refused = await post({ ...body, client_metadata: { a: arrays(max - 1) } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'nesting_too_deep', param: expect.stringMatching(/^client_metadata\.a\[0\]/) });
  });

  it('an MCP tool whose schema nests too deep is left out of the listing; the others are offered', async () => {
    upstream.setScript((request) => flavor.render(request, { text: 'listed' }));
    for (const stream of [false, true]) {
      const answer = await post({ input: 'x', tools: [mcpTool], stream });
      expect(answer.status).toBe(200);
      const response = stream ? JSON.parse(/event: response\.completed\ndata: (.*)\n/.exec(answer.body)![1]!).response : answer.body;
      assertValidResponseWithOpenAIItems(response);
      expect(response.output[0].tools.map((tool: any) => tool.name)).toEqual(['echo']);
      expect(offered(upstream.requests.at(-1)!)).toEqual(['srv__echo']);
    }
  });

  it(`a server-run call whose arguments nest past ${REQUEST_LIMITS.maxJsonDepth} levels gets an error output; nothing reaches the server; the model's next turn goes up`, async () => {
    upstream.setScript(callingDeeply(flavor, 'srv__echo'));
    const calls = mcp.calls.length;
    for (const stream of [false, true]) {
      const answer = await post({ input: 'x', tools: [mcpTool], stream });
      expect(answer.status).toBe(200);
      const response = stream ? JSON.parse(/event: response\.completed\ndata: (.*)\n/.exec(answer.body)![1]!).response : answer.body;
      expect(response.status).toBe('completed');
      const call = response.output.find((item: any) => item.type === 'mcp_call');
      expect(call.error).toContain(`more than ${REQUEST_LIMITS.maxJsonDepth} levels deep`);
      expect(response.output.at(-1).content[0].text).toMatch(/^saw .*levels deep/);
    }
    expect(mcp.calls.length).toBe(calls);
  });

  it('a client tool called with deeply nested arguments: the response, then the continuation with its output, both answer', async () => {
    upstream.setScript(callingDeeply(flavor, 'lookup'));
    const tools = [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }];
    const paused = await post({ input: 'x', tools });
    expect(paused.status).toBe(200);
    const call = paused.body.output.find((item: any) => item.type === 'function_call');
    expect(call.arguments).toBe(deepArguments);
    const continued = await post({ previous_response_id: paused.body.id, tools, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'found' }] });
    expect(continued.status).toBe(200);
    expect(continued.body.output.at(-1).content[0].text).toBe('saw found');
  });

  it('a client-run tool search called with deeply nested arguments keeps them as text', async () => {
    upstream.setScript(callingDeeply(flavor, 'tool_search'));
    const answer = await post({ input: 'x', tools: [{ type: 'tool_search', execution: 'client' }] });
    expect(answer.status).toBe(200);
    const search = answer.body.output.find((item: any) => item.type === 'tool_search_call');
    expect(search.arguments).toBe(deepArguments);
  });
});
