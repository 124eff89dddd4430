import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertErrorEnvelope, assertValidEvent, assertValidExtension, assertValidResponse } from '../support/openresponses-schema.ts';
import { flavors, scriptModel, type ProviderFlavor } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';
import { finalOf, SocketClient } from '../support/socket-client.ts';
import { waitFor } from '../support/wait-for.ts';

const KEY_A = 'sk-usage-team-a-000001';
const KEY_B = 'sk-usage-team-b-000001';
const KEY_ADMIN = 'sk-usage-admin-000001';

/** Every response of these tests: the model adds 2 and 3 with the MCP tool (100 tokens in, 20 out), then answers (130 in, 7 out). */
const TOOL_TURN = { input: 100, output: 20 };
const ANSWER_TURN = { input: 130, output: 7 };
const PER_RESPONSE = { input_tokens: TOOL_TURN.input + ANSWER_TURN.input, output_tokens: TOOL_TURN.output + ANSWER_TURN.output, tool_calls: 1 };

function scriptToolLoop(upstream: ScriptedChatUpstream, flavor: ProviderFlavor): void {
  scriptModel(upstream, flavor, (_request, results) =>
    results.length === 0 ? { calls: [{ id: 'call_add', name: 'tools__add', args: { a: 2, b: 3 } }], usage: TOOL_TURN } : { text: `The sum is ${results[0]}.`, usage: ANSWER_TURN },
  );
}

type UsageRow = { object: string; day: string; tenant: string; model: string; responses: number; input_tokens: number; output_tokens: number; total_tokens: number; cached_tokens: number; reasoning_tokens: number; tool_calls: number };
type UsageList = { object: 'list'; start: string; end: string; tenant: string | null; data: UsageRow[] };

const today = () => new Date().toISOString().slice(0, 10);
const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
/** GET /v1/usage through the SDK; every answer valid against openapi/loopgate-extensions.json. */
async function usageOf(client: OpenAI, query: Record<string, string> = {}): Promise<UsageList> {
  const list = await client.get<UsageList>('/usage', { query });
  assertValidExtension('UsageList', list);
  return list;
}
const row = (tenant: string, model: string, responses: number) => ({
  object: 'loopgate.usage',
  day: today(),
  tenant,
  model,
  responses,
  input_tokens: responses * PER_RESPONSE.input_tokens,
  output_tokens: responses * PER_RESPONSE.output_tokens,
  total_tokens: responses * (PER_RESPONSE.input_tokens + PER_RESPONSE.output_tokens),
  cached_tokens: 0,
  reasoning_tokens: 0,
  tool_calls: responses * PER_RESPONSE.tool_calls,
});

describe.each(flavors)('usage accounting per tenant, $name upstream', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  const as = (apiKey: string) => new OpenAI({ baseURL: gateway.baseURL, apiKey, maxRetries: 0 });
  const sockets: SocketClient[] = [];

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    gateway = await startGateway(upstreamUrl, {
      ...flavor.config(upstreamUrl),
      mcp: { callItems: 'function', servers: [{ name: 'tools', url: mcpUrl, allowedTools: ['add'] }] },
      auth: {
        apiKeys: [
          { key: KEY_A, tenant: 'team-a' },
          { key: KEY_B, tenant: 'team-b' },
          { key: KEY_ADMIN, tenant: 'ops', admin: true },
        ],
      },
    });
  });
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.close();
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it('sums tokens over every turn and counts the tools run, per tenant, model and day, whatever the transport; each tenant reads its own, the admin everyone', async () => {
    scriptToolLoop(upstream, flavor);
    const a = as(KEY_A);
    const b = as(KEY_B);
    const otherModel = `${flavor.model}-large`;

    const json = await a.responses.create({ model: flavor.model, input: 'What is 2 + 3?' });
    assertValidResponse(json);
    expect(json.output.map((item) => item.type)).toEqual(['function_call', 'function_call_output', 'message']);
    expect(json.usage).toMatchObject({ input_tokens: PER_RESPONSE.input_tokens, output_tokens: PER_RESPONSE.output_tokens });

    const events = [];
    for await (const event of await a.responses.create({ model: flavor.model, input: 'And streamed?', stream: true })) events.push(event);
    for (const event of events) assertValidEvent(event);
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { usage: { input_tokens: PER_RESPONSE.input_tokens } } });

    // A background response is accounted when it ends, on the runner.
    const queued = await a.responses.create({ model: flavor.model, input: 'In the background', background: true });
    assertValidResponse(queued);
    await waitFor(async () => (await a.responses.retrieve(queued.id)).status === 'completed');

    await b.responses.create({ model: flavor.model, input: 'b one' });
    await b.responses.create({ model: otherModel, input: 'b two' });
    const socket = new SocketClient(b);
    sockets.push(socket);
    expect(finalOf(await socket.create({ model: otherModel, input: 'b over a WebSocket' }))).toMatchObject({ status: 'completed', usage: { input_tokens: PER_RESPONSE.input_tokens } });

    await waitFor(async () => (await usageOf(as(KEY_ADMIN))).data.reduce((sum, entry) => sum + entry.responses, 0) === 6);
    const own = await usageOf(a);
    expect(own).toEqual({ object: 'list', start: today(), end: today(), tenant: 'team-a', data: [row('team-a', flavor.model, 3)] });
    expect((await usageOf(b)).data).toEqual([row('team-b', flavor.model, 1), row('team-b', otherModel, 2)]);
    expect((await usageOf(b, { tenant: 'team-b' })).data).toHaveLength(2);

    const everyone = await usageOf(as(KEY_ADMIN));
    expect(everyone.tenant).toBeNull();
    expect(everyone.data).toEqual([row('team-a', flavor.model, 3), row('team-b', flavor.model, 1), row('team-b', otherModel, 2)]);
    expect((await usageOf(as(KEY_ADMIN), { tenant: 'team-b' })).data).toEqual([row('team-b', flavor.model, 1), row('team-b', otherModel, 2)]);

    // Per day: nothing yesterday; a range covering both days holds today's rows.
    expect((await usageOf(as(KEY_ADMIN), { start: yesterday(), end: yesterday() })).data).toEqual([]);
    expect((await usageOf(a, { start: yesterday(), end: today() })).data).toEqual([row('team-a', flavor.model, 3)]);
    // A start alone reads up to today (a month to date); an end alone, that one day.
    expect(await usageOf(a, { start: yesterday() })).toMatchObject({ start: yesterday(), end: today(), data: [row('team-a', flavor.model, 3)] });
    expect(await usageOf(a, { end: yesterday() })).toMatchObject({ start: yesterday(), end: yesterday(), data: [] });
  });

  it("another tenant's usage is refused to a tenant key (403); malformed ranges are 400s naming the parameter", async () => {
    const refused = await usageOf(as(KEY_A), { tenant: 'team-b' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
    const denied = refused as InstanceType<typeof OpenAI.PermissionDeniedError>;
    assertErrorEnvelope({ error: denied.error });
    expect(denied.error).toMatchObject({ type: 'permission_error', code: 'permission_denied', param: 'tenant' });

    for (const [query, param] of [
      [{ start: '2030-01-02', end: '2030-01-01' }, 'start'],
      [{ start: '2030-02-30' }, 'start'],
      [{ end: 'tomorrow' }, 'end'],
      [{ start: '2020-01-01', end: '2030-01-01' }, 'start'],
      [{ tenant: 'not a tenant!' }, 'tenant'],
      [{ month: '2030-01' }, 'month'],
    ] as const) {
      const error = await usageOf(as(KEY_ADMIN), query).catch((caught: unknown) => caught);
      expect(error, JSON.stringify(query)).toBeInstanceOf(OpenAI.BadRequestError);
      const bad = error as InstanceType<typeof OpenAI.BadRequestError>;
      assertErrorEnvelope({ error: bad.error });
      expect(bad.error).toMatchObject({ type: 'invalid_request_error', param });
    }
    const response = await fetch(`${gateway.baseURL}/usage`);
    expect(response.status).toBe(401);
  });
});

describe('usage without API keys', () => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  let gateway: RunningGateway;

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    gateway = await startGateway(upstreamUrl, { mcp: { callItems: 'function', servers: [{ name: 'tools', url: mcpUrl, allowedTools: ['add'] }] } });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it('everything belongs to the one tenant, "default", and anyone reads it', async () => {
    const [flavor] = flavors;
    scriptToolLoop(upstream, flavor!);
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'unused', maxRetries: 0 });
    await client.responses.create({ model: 'm', input: 'x' });
    await waitFor(async () => (await usageOf(client)).data.length === 1);
    expect((await usageOf(client)).data).toEqual([row('default', 'm', 1)]);
    expect((await usageOf(client, { tenant: 'default' })).data).toEqual([row('default', 'm', 1)]);
  });
});
