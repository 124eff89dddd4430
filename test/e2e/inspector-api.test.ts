import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants, parseSseText } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertErrorEnvelope, assertValidExtension, assertValidResponse } from '../support/openresponses-schema.ts';
import { flavors, openaiChat, scriptModel, type ModelTurn } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

const KEY_A = 'sk-inspector-team-a-0123';
const KEY_B = 'sk-inspector-team-b-0123';
const KEY_ADMIN = 'sk-inspector-operator-0123';
const MCP_SECRET = 'mcp-header-secret-4711';
const UPSTREAM_KEY = 'sk-inspector-upstream-0123';
const apiKeys = [
  { key: KEY_A, tenant: 'team-a' },
  { key: KEY_B, tenant: 'team-b' },
  { key: KEY_ADMIN, tenant: 'ops', admin: true },
];

/** The model's first turn calls `calls`; its second answers with the results it saw. */
const callsThenAnswer = (calls: ModelTurn['calls']) => (_request: unknown, results: string[]): ModelTurn => (results.length === 0 ? { calls } : { text: `saw ${results.length} results` });

/** GET on the gateway with an optional key; the body parsed as JSON (or text for streams). */
async function get(gateway: RunningGateway, path: string, key?: string): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(`${gateway.origin}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {}, redirect: 'manual' });
  const text = await response.text();
  const json = (response.headers.get('content-type') ?? '').includes('application/json');
  return { status: response.status, headers: response.headers, body: json ? JSON.parse(text) : text };
}

describe.each(flavors)('inspector data over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer('streamable', { adminTools: true });
  let gateway: RunningGateway;
  let mcpUrl: string;
  const as = (apiKey: string) => new OpenAI({ baseURL: gateway.baseURL, apiKey, maxRetries: 0 });

  beforeAll(async () => {
    let upstreamUrl: string;
    [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    // The upstream key a refusal may echo (long enough to count as a secret).
    const configured = flavor.config(upstreamUrl) as { providers: Record<string, { apiKey: string }> };
    for (const provider of Object.values(configured.providers)) provider.apiKey = UPSTREAM_KEY;
    gateway = await startGateway(upstreamUrl, {
      ...configured,
      auth: { apiKeys },
      inspector: { enabled: true },
      // The same server once more, as a request names it (on loopback, so allowed by prefix).
      mcp: { callItems: 'function', servers: [{ name: 'tools', url: mcpUrl, headers: { 'x-api-key': MCP_SECRET }, timeoutMs: 1_000 }], allowedUrls: [`${new URL(mcpUrl).origin}/`] },
    });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });
  beforeEach(() => scriptModel(upstream, flavor, callsThenAnswer([{ id: 'call_add', name: 'tools__add', args: { a: 2, b: 3 } }, { id: 'call_boom', name: 'tools__explode', args: {} }])));

  /** One foreground response of each tenant: team-a's as JSON, team-b's streamed. */
  async function oneEach(): Promise<{ mine: OpenAI.Responses.Response; theirs: Record<string, any> }> {
    const mine = await as(KEY_A).responses.create({ model: flavor.model, input: 'add and explode' });
    assertValidResponse(mine);
    const events: any[] = [];
    for await (const event of await as(KEY_B).responses.create({ model: flavor.model, input: 'add and explode', stream: true })) events.push(event);
    return { mine, theirs: assertEventStreamInvariants(events) };
  }

  it('lists each tenant its own responses and the admin key every tenant\'s, with what the client saw: status, model, turns, tool calls, tokens', async () => {
    const { mine, theirs } = await oneEach();
    const listOf = async (key: string) => {
      const { status, body } = await get(gateway, '/v1/inspector/responses?limit=100', key);
      expect(status).toBe(200);
      assertValidExtension('InspectorResponseList', body);
      return body.data as any[];
    };
    const [forA, forB, forAdmin] = await Promise.all([listOf(KEY_A), listOf(KEY_B), listOf(KEY_ADMIN)]);
    expect(forA.every((entry) => entry.tenant === 'team-a')).toBe(true);
    expect(forB.every((entry) => entry.tenant === 'team-b')).toBe(true);
    expect(forA.map((entry) => entry.id)).toContain(mine.id);
    expect(forA.map((entry) => entry.id)).not.toContain(theirs.id);
    expect(forAdmin.map((entry) => entry.id)).toEqual(expect.arrayContaining([mine.id, theirs.id]));
    // Newest first.
    expect(forAdmin.findIndex((entry) => entry.id === theirs.id)).toBeLessThan(forAdmin.findIndex((entry) => entry.id === mine.id));

    for (const [entry, response] of [
      [forA.find((candidate) => candidate.id === mine.id), mine],
      [forB.find((candidate) => candidate.id === theirs.id), theirs],
    ] as const) {
      expect(entry).toMatchObject({ status: 'completed', model: flavor.model, provider: flavor.provider, background: false, turns: 2, tool_calls: 2, failed_tool_calls: 1, error: null, incomplete_reason: null });
      expect(entry.tokens).toEqual({ input: response.usage!.input_tokens, output: response.usage!.output_tokens, total: response.usage!.total_tokens });
      expect(entry.created_at).toBe(response.created_at);
      expect(entry.duration_ms).toBeGreaterThanOrEqual(0);
    }
  });

  it('shows one response as a timeline: its turns in order, each tool call inside its turn, errors as the client saw them', async () => {
    const { mine } = await oneEach();
    const { status, body: timeline } = await get(gateway, `/v1/inspector/responses/${mine.id}`, KEY_A);
    expect(status).toBe(200);
    assertValidExtension('InspectorTimeline', timeline);
    expect(timeline.source).toBe('live');
    expect(timeline.turns.map((turn: any) => [turn.turn, turn.tool_calls])).toEqual([[1, 2], [2, 0]]);
    const [first, second] = timeline.turns;
    expect(first.finish).toBe(flavor.finish.tools);
    expect(second.finish).toBe(flavor.finish.done);
    const outputs = new Map(mine.output.flatMap((item) => (item.type === 'function_call_output' ? [[item.call_id, item.output]] : [])));
    expect(timeline.tool_calls.map((call: any) => [call.call_id, call.name, call.executor, call.turn, call.status])).toEqual([
      ['call_add', 'tools__add', 'mcp', 1, 'completed'],
      ['call_boom', 'tools__explode', 'mcp', 1, 'failed'],
    ]);
    const failed = timeline.tool_calls[1];
    // The error the client got, not the server's raw text (internal address, the operator's MCP credential, a stack).
    expect(failed.error).toBe(outputs.get('call_boom'));
    for (const leak of ['10.0.3.7', MCP_SECRET, 'at queryAdmin']) expect(failed.error).not.toContain(leak);
    // The calls ran after the first model call ended and before the second started.
    for (const call of timeline.tool_calls) {
      expect(call.started_ms).toBeGreaterThanOrEqual(first.started_ms + first.duration_ms - 1);
      expect(call.started_ms + call.duration_ms).toBeLessThanOrEqual(second.started_ms + 1);
    }
    expect(timeline.response.duration_ms).toBeGreaterThanOrEqual(second.started_ms + second.duration_ms - 1);
  });

  it('calls the gateway answered without running them (an unknown tool) are listed and counted as failed, and every error reads as the client saw it, unwrapped', async () => {
    scriptModel(upstream, flavor, callsThenAnswer([{ id: 'call_ghost', name: 'no_such_tool', args: {} }, { id: 'call_late', name: 'tools__slow', args: { ms: 3_000 } }]));
    const response = await as(KEY_A).responses.create({ model: flavor.model, input: 'call a ghost, wait too long' });
    assertValidResponse(response);
    const outputs = new Map(response.output.flatMap((item) => (item.type === 'function_call_output' ? [[item.call_id, JSON.parse(item.output as string).error]] : [])));
    expect(outputs.get('call_ghost')).toMatch(/no_such_tool/);
    expect(outputs.get('call_late')).toMatch(/did not finish within 1000 ms/);
    const { body: timeline } = await get(gateway, `/v1/inspector/responses/${response.id}`, KEY_A);
    assertValidExtension('InspectorTimeline', timeline);
    expect(timeline.tool_calls.map((call: any) => [call.call_id, call.turn, call.status, call.error])).toEqual(expect.arrayContaining([
      ['call_ghost', 1, 'failed', outputs.get('call_ghost')],
      ['call_late', 1, 'failed', outputs.get('call_late')],
    ]));
    expect(timeline.response).toMatchObject({ tool_calls: 2, failed_tool_calls: 2 });
  });

  it('a turn whose model call is refused at once (after the tools ran) is shown ended, not running', async () => {
    upstream.setScript((request) => (flavor.seen(request).some((seen) => seen.kind === 'result') ? flavor.refusal(500, 'The server had an error.') : flavor.render(request, { calls: [{ id: 'call_add', name: 'tools__add', args: { a: 1, b: 1 } }] })));
    const failed = await as(KEY_A).responses.create({ model: flavor.model, input: 'add' });
    assertValidResponse(failed);
    expect(failed.status).toBe('failed');
    const { body: timeline } = await get(gateway, `/v1/inspector/responses/${failed.id}`, KEY_A);
    expect(timeline.turns.map((turn: any) => turn.turn)).toEqual([1, 2]);
    // Both ended: each has its duration (the page shows a turn without one as still running).
    for (const turn of timeline.turns) expect(turn.duration_ms).toEqual(expect.any(Number));
  });

  it("a first model call refused at once with the gateway's own upstream key in its message: the inspector shows it blanked, as the client got it", async () => {
    upstream.setScript(() => flavor.refusal(429, `Rate limit reached for key ${UPSTREAM_KEY}`));
    const refused = await as(KEY_A).responses.create({ model: flavor.model, input: 'hi' }).then(
      () => null,
      (error: unknown) => error as InstanceType<typeof OpenAI.APIError>,
    );
    expect(refused?.message).toContain('[redacted]');
    const { body } = await get(gateway, '/v1/inspector/responses?limit=100', KEY_A);
    const entry = (body.data as any[]).find((candidate) => candidate.error?.message?.startsWith('Rate limit reached'));
    expect(entry.error.message).not.toContain(UPSTREAM_KEY);
    expect(entry.error.message).toContain('[redacted]');
  });

  it('needs a key for every data call; another tenant\'s response is a 404 for tenant keys and visible to the admin key', async () => {
    const { mine, theirs } = await oneEach();
    for (const path of ['/v1/inspector/responses', `/v1/inspector/responses/${mine.id}`, `/v1/inspector/responses/${mine.id}/events`]) {
      for (const key of [undefined, 'sk-not-a-configured-key']) {
        const { status, body } = await get(gateway, path, key);
        expect(status).toBe(401);
        assertErrorEnvelope(body);
        expect(body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
      }
    }
    for (const path of [`/v1/inspector/responses/${theirs.id}`, `/v1/inspector/responses/${theirs.id}?tenant=team-b`, `/v1/inspector/responses/${mine.id}?tenant=team-b`]) {
      const { status, body } = await get(gateway, path, KEY_A);
      expect(status).toBe(404);
      assertErrorEnvelope(body);
      expect(body.error.code).toBe('response_not_found');
    }
    const admin = await get(gateway, `/v1/inspector/responses/${theirs.id}`, KEY_ADMIN);
    expect(admin.status).toBe(200);
    expect(admin.body.response).toMatchObject({ id: theirs.id, tenant: 'team-b' });
    for (const [query, param] of [['/v1/inspector/responses?limit=0', 'limit'], [`/v1/inspector/responses/${mine.id}?tenant=no%20such`, 'tenant'], [`/v1/inspector/responses/${mine.id}/events?starting_after=soon`, 'starting_after']]) {
      const refused = await get(gateway, query!, KEY_A);
      expect(refused.status).toBe(400);
      assertErrorEnvelope(refused.body);
      expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', param });
    }
    // A foreground response has no event stream: said in the inspector's own terms (it has no `stream` parameter).
    const foreground = await get(gateway, `/v1/inspector/responses/${mine.id}/events`, KEY_A);
    expect(foreground.status).toBe(400);
    assertErrorEnvelope(foreground.body);
    expect(foreground.body.error).toMatchObject({ type: 'invalid_request_error', code: 'response_not_background', param: null });
    expect(foreground.body.error.message).toContain(`/v1/inspector/responses/${mine.id}`);
  });

  it('serves a background response\'s resumable stream to its tenant and to the admin key, from any sequence number', async () => {
    scriptModel(upstream, flavor, callsThenAnswer([{ id: 'call_slow', name: 'tools__slow', args: { ms: 300 } }]));
    const queued = await as(KEY_A).responses.create({ model: flavor.model, input: 'wait a bit', background: true });
    expect(queued.status).toBe('queued');
    const stream = await get(gateway, `/v1/inspector/responses/${queued.id}/events`, KEY_A);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    const { events, done } = parseSseText(stream.body);
    expect(done).toBe(true);
    const final = assertEventStreamInvariants(events);
    expect(final.status).toBe('completed');
    assertValidResponse(await as(KEY_A).responses.retrieve(queued.id));

    const fromAdmin = parseSseText((await get(gateway, `/v1/inspector/responses/${queued.id}/events?starting_after=3`, KEY_ADMIN)).body).events;
    expect(fromAdmin.map((event) => event.sequence_number)).toEqual(events.slice(4).map((event) => event.sequence_number));
    expect((await get(gateway, `/v1/inspector/responses/${queued.id}/events`, KEY_B)).status).toBe(404);

    const timeline = (await get(gateway, `/v1/inspector/responses/${queued.id}`, KEY_A)).body;
    expect(timeline.response).toMatchObject({ background: true, status: 'completed', turns: 2, tool_calls: 1 });
    expect(timeline.tool_calls[0]).toMatchObject({ name: 'tools__slow', status: 'completed', turn: 1 });
    expect(timeline.tool_calls[0].duration_ms).toBeGreaterThanOrEqual(250);
    // A foreground response has no stream to follow.
    const { mine } = await oneEach();
    const refused = await get(gateway, `/v1/inspector/responses/${mine.id}/events`, KEY_A);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'response_not_background', param: null });
  });

  it('records approval requests, and the paused status, of a request-named MCP server', async () => {
    scriptModel(upstream, flavor, callsThenAnswer([{ id: 'call_add', name: 'calc__add', args: { a: 1, b: 1 } }]));
    const paused = await as(KEY_A).responses.create({ model: flavor.model, input: 'add', tools: [{ type: 'mcp', server_label: 'calc', server_url: mcpUrl, require_approval: 'always' }] });
    expect(paused.status).toBe('requires_action');
    expect(paused.output.map((item) => item.type)).toEqual(['mcp_list_tools', 'mcp_approval_request']);
    const timeline = (await get(gateway, `/v1/inspector/responses/${paused.id}`, KEY_A)).body;
    assertValidExtension('InspectorTimeline', timeline);
    expect(timeline.response.status).toBe('requires_action');
    expect(timeline.approvals).toEqual([{ turn: 1, call_id: 'call_add', name: 'calc__add', at_ms: expect.any(Number) }]);
    expect(timeline.tool_calls).toEqual([]);
  });
});

describe('inspector: what is not watched here, and the page', () => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  let off: RunningGateway;
  const as = (apiKey: string) => new OpenAI({ baseURL: gateway.baseURL, apiKey, maxRetries: 0 });

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    // Remembers one response: the one before it is read back from the store. With a server-side tool, the loop runs.
    [gateway, off] = await Promise.all([
      startGateway(upstreamUrl, { auth: { apiKeys }, inspector: { enabled: true, recentResponses: 1 }, mcp: { callItems: 'function', servers: [{ name: 'tools', url: mcpUrl }] } }),
      startGateway(upstreamUrl, { auth: { apiKeys } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([gateway.close(), off.close()]);
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it('a response this replica no longer remembers is rebuilt from the store: its tool calls and their outcome, no turns or timings', async () => {
    // A client function call and a call to a tool nobody offers (the gateway answers it with an error output).
    scriptModel(upstream, openaiChat, () => ({ calls: [{ id: 'call_weather', name: 'get_weather', args: { city: 'Oslo' } }, { id: 'call_ghost', name: 'ghost', args: {} }] }));
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false }];
    const paused = await as(KEY_A).responses.create({ model: openaiChat.model, input: 'weather?', tools });
    expect(paused.status).toBe('requires_action');
    scriptModel(upstream, openaiChat, () => ({ text: 'newer' }));
    const newer = await as(KEY_A).responses.create({ model: openaiChat.model, input: 'hi' });

    const list = (await get(gateway, '/v1/inspector/responses', KEY_A)).body;
    expect(list.data.map((entry: any) => entry.id)).toEqual([newer.id]);
    const { status, body: timeline } = await get(gateway, `/v1/inspector/responses/${paused.id}`, KEY_A);
    expect(status).toBe(200);
    assertValidExtension('InspectorTimeline', timeline);
    const ghostOutput = paused.output.find((item) => item.type === 'function_call_output' && item.call_id === 'call_ghost') as { output: string };
    expect(timeline).toMatchObject({ source: 'stored', turns: [], approvals: [], response: { id: paused.id, tenant: 'team-a', status: paused.status, turns: null, provider: null, tool_calls: 2, failed_tool_calls: 1 } });
    expect(timeline.tool_calls).toEqual([
      { turn: null, call_id: 'call_weather', name: 'get_weather', executor: null, started_ms: null, duration_ms: null, status: null, error: null },
      { turn: null, call_id: 'call_ghost', name: 'ghost', executor: null, started_ms: null, duration_ms: null, status: 'failed', error: JSON.parse(ghostOutput.output).error },
    ]);
    // The admin may name the tenant of a response the replica does not remember, or leave it to be found (the page's "open by id" knows none); tenant keys cannot.
    expect((await get(gateway, `/v1/inspector/responses/${paused.id}?tenant=team-a`, KEY_ADMIN)).body.response.id).toBe(paused.id);
    expect((await get(gateway, `/v1/inspector/responses/${paused.id}`, KEY_ADMIN)).body.response).toMatchObject({ id: paused.id, tenant: 'team-a' });
    expect((await get(gateway, `/v1/inspector/responses/${paused.id}?tenant=team-b`, KEY_ADMIN)).status).toBe(404);
    expect((await get(gateway, `/v1/inspector/responses/${paused.id}`, KEY_B)).status).toBe(404);
    expect((await get(gateway, `/v1/inspector/responses/${paused.id}?tenant=team-a`, KEY_B)).status).toBe(404);
  });

  it('serves the page without a key, locked down, while its data needs one', async () => {
    const page = await get(gateway, '/inspector/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.body).toContain('<script type="module" src="inspector.js"></script>');
    for (const [file, type] of [['inspector.js', 'text/javascript'], ['sse-events.js', 'text/javascript'], ['inspector.css', 'text/css']]) {
      const asset = await get(gateway, `/inspector/${file}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('content-type')).toContain(type);
    }
    const bare = await get(gateway, '/inspector');
    expect(bare.status).toBe(302);
    expect(bare.headers.get('location')).toBe('/inspector/');
    const unknown = await get(gateway, '/inspector/secrets.json');
    expect(unknown.status).toBe(404);
    assertErrorEnvelope(unknown.body);
    expect((await get(gateway, '/v1/inspector/responses')).status).toBe(401);
  });

  it('is off by default: no page, no data endpoints', async () => {
    for (const path of ['/inspector/', '/v1/inspector/responses']) {
      const { status, body } = await get(off, path, KEY_ADMIN);
      expect(status).toBe(404);
      assertErrorEnvelope(body);
      expect(body.error.code).toBe('unknown_route');
    }
  });
});
