import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidResponse, assertValidResponseWithMcpItems, assertValidResponseWithOpenAIItems } from '../support/openresponses-schema.ts';
import { delta, parsePrometheusText, sumOf, type Scrape } from '../support/prometheus-text.ts';
import { flavors, type ModelTurn, type ProviderFlavor, type Seen, type TurnTokens } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { finalOf, SocketClient } from '../support/socket-client.ts';
import { waitFor } from '../support/wait-for.ts';

/** What every model turn of these tests reports. */
const TOKENS = { input: 30, output: 12, cached: 8, reasoning: 4 } satisfies TurnTokens;

/** Histogram families: every series' buckets are cumulative and end at its count. */
function assertHistogramsWellFormed(scrape: Scrape): void {
  for (const [family, type] of scrape.types) {
    if (type !== 'histogram') continue;
    const series = new Map<string, { buckets: { le: number; value: number }[]; count: number }>();
    for (const sample of scrape.samples) {
      if (!sample.name.startsWith(`${family}_`)) continue;
      const { le, ...rest } = sample.labels;
      const key = JSON.stringify(Object.entries(rest).sort());
      const entry = series.get(key) ?? { buckets: [], count: Number.NaN };
      if (sample.name === `${family}_bucket`) entry.buckets.push({ le: le === '+Inf' ? Infinity : Number(le), value: sample.value });
      if (sample.name === `${family}_count`) entry.count = sample.value;
      series.set(key, entry);
    }
    for (const [key, entry] of series) {
      const buckets = entry.buckets.sort((a, b) => a.le - b.le);
      for (let index = 1; index < buckets.length; index++) expect(buckets[index]!.value, `${family} ${key}`).toBeGreaterThanOrEqual(buckets[index - 1]!.value);
      expect(buckets.at(-1), `${family} ${key}`).toEqual({ le: Infinity, value: entry.count });
    }
  }
}

/**
 * Prometheus metrics after scripted traffic through the official SDK, over
 * each upstream API: counters and histograms move by exactly what the
 * traffic did, with bounded labels (configured model aliases, else
 * `other`; no ids), and the gauges follow what is open.
 */
describe.each(flavors)('metrics over $name', (flavor: ProviderFlavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  const provider = flavor.provider;
  let gateway: RunningGateway;
  let client: OpenAI;
  const responseIds: string[] = [];
  /** An MCP server a request names, under a label the client chose. */
  let namedServer: Record<string, unknown>;

  /** The model, by the first thing the user said. */
  function reply(request: RecordedRequest): UpstreamReply {
    const seen = flavor.seen(request);
    const said = seen.find((entry): entry is Extract<Seen, { kind: 'user' }> => entry.kind === 'user')?.text ?? '';
    const results = seen.flatMap((entry) => (entry.kind === 'result' ? [entry.content] : []));
    const turn = (value: ModelTurn) => flavor.render(request, { ...value, usage: TOKENS });
    switch (said) {
      case 'tools':
        if (results.length > 0) return turn({ text: `Results: ${results.join(' | ')}` });
        return turn({ calls: [{ id: 'call_add', name: 'tools__add', args: { a: 2, b: 3 } }, { id: 'call_fail', name: 'tools__fail', args: {} }] });
      case 'calc':
        if (results.length > 0) return turn({ text: `Sum: ${results.join(' | ')}` });
        return turn({ calls: [{ id: 'call_calc', name: 'calc__add', args: { a: 20, b: 22 } }] });
      // A request's server labelled `tools_`: its tools are `tools___…`, which begin as the operator server `tools`'s do.
      case 'lookalike':
        if (results.length > 0) return turn({ text: `Sum: ${results.join(' | ')}` });
        return turn({ calls: [{ id: 'call_like', name: 'tools___add', args: { a: 20, b: 22 } }] });
      case 'boom':
        return flavor.failAtOnce().reply;
      case 'midstream':
        return flavor.failMidStream('Par').reply;
      case 'trickle': {
        // The first words, then silence: the call ends only when cancelled.
        const rendered = turn({ textPieces: ['Hel', 'lo'] });
        if (rendered.kind !== 'sse') throw new Error('trickle is streamed');
        const first = rendered.pieces.findIndex((piece) => piece.includes('Hel'));
        return { ...rendered, pieces: rendered.pieces.slice(0, first + 1), endAfter: false };
      }
      case 'held':
        // Answers only when the call is cancelled.
        return { kind: 'hang' };
      default:
        return turn({ textPieces: ['Hel', 'lo'] });
    }
  }

  async function scrape(): Promise<Scrape> {
    const response = await fetch(`${gateway.origin}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(await response.text());
  }

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    upstream.setScript(reply);
    gateway = await startGateway(upstreamUrl, {
      ...flavor.config(upstreamUrl),
      models: { fast: { provider, model: flavor.model } },
      mcp: { servers: [{ name: 'tools', url: mcpUrl, allowedTools: ['add', 'fail'] }], allowedUrls: [`${new URL(mcpUrl).origin}/`] },
    });
    namedServer = { type: 'mcp', server_label: 'calc', server_url: mcpUrl, require_approval: 'never', allowed_tools: ['add'] };
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it('completed responses, JSON and streamed, one with an MCP tool loop: counts, durations, time to first token, turns, tokens, tool calls, requests and store writes', async () => {
    const before = await scrape();

    const json = await client.responses.create({ model: 'fast', input: 'hello' });
    assertValidResponse(json);
    expect(json.output_text).toBe('Hello');
    const streamed: any[] = [];
    for await (const event of await client.responses.create({ model: 'fast', input: 'hello', stream: true })) streamed.push(event);
    expect(assertEventStreamInvariants(streamed).status).toBe('completed');
    const looped = await client.responses.create({ model: 'fast', input: 'tools' });
    assertValidResponseWithMcpItems(looped);
    // The failed call's result is shown to the model as its mcp_call's error.
    expect(looped.output_text).toBe('Results: 5 | {"error":"the thing is broken"}');
    // A model name that is no configured alias is counted as `other`.
    const unknown = await client.responses.create({ model: flavor.model, input: 'hello' });
    assertValidResponse(unknown);
    responseIds.push(json.id, assertEventStreamInvariants(streamed).id, looped.id, unknown.id);

    const after = await scrape();
    assertHistogramsWellFormed(after);
    const fast = { model: 'fast', provider };
    const other = { model: 'other', provider };
    expect(delta(before, after, 'loopgate_responses_total', { ...fast, status: 'completed' })).toBe(3);
    expect(delta(before, after, 'loopgate_responses_total', { ...other, status: 'completed' })).toBe(1);
    expect(delta(before, after, 'loopgate_responses_total', { model: flavor.model })).toBe(0);

    expect(delta(before, after, 'loopgate_response_duration_seconds_count', fast)).toBe(3);
    expect(delta(before, after, 'loopgate_response_duration_seconds_count', other)).toBe(1);
    const durationSum = delta(before, after, 'loopgate_response_duration_seconds_sum', fast);
    expect(delta(before, after, 'loopgate_response_time_to_first_token_seconds_count', fast)).toBe(3);
    expect(delta(before, after, 'loopgate_response_time_to_first_token_seconds_count', other)).toBe(1);
    const firstTokenSum = delta(before, after, 'loopgate_response_time_to_first_token_seconds_sum', fast);
    expect(firstTokenSum).toBeGreaterThan(0);
    // Each response's first token came before its end.
    expect(firstTokenSum).toBeLessThanOrEqual(durationSum);

    // Turns: 1, 1 and 2 (the tool loop) for `fast`.
    expect(delta(before, after, 'loopgate_response_turns_count', fast)).toBe(3);
    expect(delta(before, after, 'loopgate_response_turns_sum', fast)).toBe(4);
    expect(delta(before, after, 'loopgate_response_turns_bucket', { ...fast, le: '1' })).toBe(2);
    expect(delta(before, after, 'loopgate_response_turns_bucket', { ...fast, le: '2' })).toBe(3);

    // Tokens: four model calls for `fast`, one for `other`, each reporting TOKENS.
    const reasoning = flavor.reportsReasoningTokens ? TOKENS.reasoning : 0;
    const tokens = (labels: Record<string, string>, type: string) => delta(before, after, 'loopgate_tokens_total', { ...labels, tenant: 'default', type });
    expect([tokens(fast, 'input'), tokens(fast, 'output'), tokens(fast, 'cached'), tokens(fast, 'reasoning')]).toEqual([4 * TOKENS.input, 4 * TOKENS.output, 4 * TOKENS.cached, 4 * reasoning]);
    expect([tokens(other, 'input'), tokens(other, 'output'), tokens(other, 'cached'), tokens(other, 'reasoning')]).toEqual([TOKENS.input, TOKENS.output, TOKENS.cached, reasoning]);
    // The usage the clients were shown is what was counted.
    expect(looped.usage).toMatchObject({ input_tokens: 2 * TOKENS.input, output_tokens: 2 * TOKENS.output });

    // Tool calls: one succeeded, one failed (an MCP isError result), both on the operator server `tools`.
    expect(delta(before, after, 'loopgate_tool_call_duration_seconds_count', { kind: 'mcp', server: 'tools', outcome: 'success' })).toBe(1);
    expect(delta(before, after, 'loopgate_tool_call_duration_seconds_count', { kind: 'mcp', server: 'tools', outcome: 'error' })).toBe(1);
    expect(delta(before, after, 'loopgate_tool_call_duration_seconds_sum', { server: 'tools' })).toBeGreaterThan(0);

    expect(delta(before, after, 'loopgate_http_requests_total', { method: 'POST', route: '/v1/responses', status: '200' })).toBe(4);
    expect(delta(before, after, 'loopgate_http_requests_total', { method: 'GET', route: '/metrics', status: '200' })).toBe(1);
    // Every response was stored: one timed write each, none failed.
    expect(delta(before, after, 'loopgate_store_operation_duration_seconds_count', { store: 'responses', operation: 'put' })).toBe(4);
    expect(delta(before, after, 'loopgate_store_operation_errors_total')).toBe(0);
    expect(delta(before, after, 'loopgate_upstream_errors_total')).toBe(0);
  });

  it('failed model calls — refused at once (an HTTP error) and failing mid-stream — count as upstream errors by provider and code, and as failed responses', async () => {
    const before = await scrape();
    const refused = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'fast', input: 'boom' }) });
    expect(refused.status).toBe(flavor.failAtOnce().status);
    const refusal = ((await refused.json()) as { error: { code: string; type: string; message: string; param: null } }).error;
    expect(refusal).toMatchObject({ type: expect.any(String), message: expect.any(String), param: null });

    const events: any[] = [];
    for await (const event of await client.responses.create({ model: 'fast', input: 'midstream', stream: true })) events.push(event);
    const failed = assertEventStreamInvariants(events);
    expect(failed.status).toBe('failed');
    expect(failed.error.code).toBe(flavor.failMidStream('').code);

    const after = await scrape();
    expect(delta(before, after, 'loopgate_upstream_errors_total', { provider, code: refusal.code })).toBe(1);
    expect(delta(before, after, 'loopgate_upstream_errors_total', { provider, code: failed.error.code })).toBe(1);
    expect(delta(before, after, 'loopgate_upstream_errors_total')).toBe(2);
    expect(delta(before, after, 'loopgate_upstream_errors_total', { code: 'other' })).toBe(0);
    expect(delta(before, after, 'loopgate_responses_total', { model: 'fast', provider, status: 'failed' })).toBe(2);
    expect(delta(before, after, 'loopgate_http_requests_total', { method: 'POST', route: '/v1/responses', status: String(refused.status) })).toBe(1);
    // Each made one model call (the refused one too, as a background response's refused call counts); only the other's first token came, before its failure.
    expect(delta(before, after, 'loopgate_response_turns_count', { model: 'fast' })).toBe(2);
    expect(delta(before, after, 'loopgate_response_turns_sum', { model: 'fast' })).toBe(2);
    expect(delta(before, after, 'loopgate_response_time_to_first_token_seconds_count', { model: 'fast' })).toBe(1);
    expect(delta(before, after, 'loopgate_response_duration_seconds_count', { model: 'fast' })).toBe(2);
  });

  it('a first model call the client left during, before the upstream answered, is a turn all the same', async () => {
    const before = await scrape();
    const calls = upstream.requests.length;
    const controller = new AbortController();
    const pending = fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'fast', input: 'held' }), signal: controller.signal }).catch(() => null);
    await waitFor(() => upstream.requests.length > calls);
    controller.abort();
    await pending;
    await waitFor(async () => delta(before, await scrape(), 'loopgate_responses_total', { model: 'fast', status: 'cancelled' }) === 1);
    const after = await scrape();
    expect(delta(before, after, 'loopgate_response_turns_count', { model: 'fast' })).toBe(1);
    expect(delta(before, after, 'loopgate_response_turns_sum', { model: 'fast' })).toBe(1);
  });

  it('gauges follow what is open: an SSE stream, a WebSocket connection (whose responses count too), a background response; MCP breaker state', async () => {
    // The operator server is listed in the background from the start.
    await waitFor(async () => sumOf(await scrape(), 'loopgate_mcp_server_state', { server: 'tools', state: 'ready' }) === 1);
    const scraped = await scrape();
    expect(sumOf(scraped, 'loopgate_mcp_server_state', { server: 'tools', state: 'unavailable' })).toBe(0);
    expect(sumOf(scraped, 'loopgate_mcp_server_state', { server: 'tools', state: 'listing' })).toBe(0);

    // A stream whose model stops after its first words stays open until the client leaves.
    let open = 0;
    for await (const event of await client.responses.create({ model: 'fast', input: 'trickle', stream: true })) {
      if (event.type !== 'response.output_text.delta') continue;
      open = sumOf(await scrape(), 'loopgate_open_streams');
      break;
    }
    expect(open).toBe(1);
    await waitFor(async () => sumOf(await scrape(), 'loopgate_open_streams') === 0);

    const before = await scrape();
    const socket = new SocketClient(client);
    try {
      const turn = await socket.create({ model: 'fast', input: 'hello' });
      expect(finalOf(turn).status).toBe('completed');
      const during = await scrape();
      expect(sumOf(during, 'loopgate_websocket_connections')).toBe(1);
      expect(delta(before, during, 'loopgate_responses_total', { model: 'fast', provider, status: 'completed' })).toBe(1);
    } finally {
      socket.close();
    }
    await waitFor(async () => sumOf(await scrape(), 'loopgate_websocket_connections') === 0);
    // The connection counts as the upgrade it was, not as a client that left before an answer.
    const closed = await scrape();
    expect(delta(before, closed, 'loopgate_http_requests_total', { method: 'GET', route: '/v1/responses', status: '101' })).toBe(1);
    expect(delta(before, closed, 'loopgate_http_requests_total', { status: '499' })).toBe(0);

    const queued = await client.responses.create({ model: 'fast', input: 'held', background: true });
    expect(sumOf(await scrape(), 'loopgate_background_responses', { state: 'in_progress' })).toBe(1);
    const cancelled = await client.responses.cancel(queued.id);
    assertValidResponse(cancelled);
    expect(cancelled.status).toBe('cancelled');
    await waitFor(async () => sumOf(await scrape(), 'loopgate_background_responses', { state: 'in_progress' }) === 0);
    const after = await scrape();
    expect(delta(before, after, 'loopgate_background_responses_ended_total', { status: 'cancelled' })).toBe(1);
    expect(delta(before, after, 'loopgate_responses_total', { model: 'fast', provider, status: 'cancelled' })).toBe(1);
    expect(delta(before, after, 'loopgate_responses_total', { model: 'fast', provider, status: 'completed' })).toBe(1);
  });

  it('special values are spelt as the text format has them (NaN, +Inf, -Inf), on scrapes close together too', async () => {
    for (let scrape = 0; scrape < 3; scrape++) {
      const body = await (await fetch(`${gateway.origin}/metrics`)).text();
      const values = body.split('\n').filter((line) => line !== '' && !line.startsWith('#')).map((line) => line.slice(line.lastIndexOf(' ') + 1));
      for (const value of values) expect(value, value).toMatch(/^(NaN|[+-]Inf|-?\d+(\.\d+)?([eE][+-]?\d+)?)$/);
    }
  });

  it('labels stay bounded: unknown model names are `other`, a server named in a request is `request`, and no id, raw model name or client label is ever a label', async () => {
    const before = await scrape();
    const invented = `model-${randomUUID()}`;
    const response = await client.responses.create({ model: invented, input: 'hello' });
    responseIds.push(response.id);
    const named = await client.responses.create({ model: 'fast', input: 'calc', tools: [namedServer as never] });
    assertValidResponseWithOpenAIItems(named);
    expect(named.output.map((item) => item.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect(named.output_text).toBe('Sum: 42');
    responseIds.push(named.id);
    const lookalike = await client.responses.create({ model: 'fast', input: 'lookalike', tools: [{ ...namedServer, server_label: 'tools_' } as never] });
    expect(lookalike.output.map((item) => item.type)).toEqual(['mcp_list_tools', 'mcp_call', 'message']);
    expect(lookalike.output_text).toBe('Sum: 42');
    responseIds.push(lookalike.id);
    const scraped = await scrape();
    expect(delta(before, scraped, 'loopgate_tool_call_duration_seconds_count', { kind: 'mcp', server: 'request', outcome: 'success' })).toBe(2);
    expect(delta(before, scraped, 'loopgate_tool_call_duration_seconds_count', { kind: 'mcp', server: 'tools' })).toBe(0);
    expect(delta(before, scraped, 'loopgate_responses_total', { model: 'other', provider, status: 'completed' })).toBe(1);
    const own = scraped.samples.filter((sample) => sample.name.startsWith('loopgate_'));
    const values = new Set(own.flatMap((sample) => Object.values(sample.labels)));
    for (const value of values) {
      expect(value).not.toMatch(/resp_|call_|req_|msg_/);
      expect(value).not.toContain(invented);
      expect(value).not.toBe(flavor.model);
      expect(value).not.toBe('calc');
    }
    for (const id of responseIds) expect([...values].some((value) => value.includes(id))).toBe(false);
    const labelValues = (label: string) => new Set(own.flatMap((sample) => (label in sample.labels ? [sample.labels[label]] : [])));
    expect([...labelValues('model')].sort()).toEqual(['fast', 'other']);
    expect([...labelValues('provider')]).toEqual([provider]);
    expect([...labelValues('tenant')]).toEqual(['default']);
    expect([...labelValues('server')].sort()).toEqual(['request', 'tools']);
    for (const route of labelValues('route')) expect(route).toMatch(/^\/[a-z0-9_/:.-]*$/);
  });
});

/** `generate: false` (what Codex sends first on every socket) prepares the state and calls no model: no turn in `loopgate_response_turns`, whose README line counts model calls. */
describe('metrics: a response that calls no model', () => {
  const upstream = new ScriptedChatUpstream(() => ({ kind: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } } }));
  let gateway: RunningGateway;
  let client: OpenAI;
  const scrape = async (): Promise<Scrape> => parsePrometheusText(await (await fetch(`${gateway.origin}/metrics`)).text());

  beforeAll(async () => {
    gateway = await startGateway(await upstream.start());
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('counts the response but no turn; a response that does call the model counts one', async () => {
    let before = await scrape();
    const prepared = await client.responses.create({ model: 'm', input: 'hello', generate: false } as never);
    assertValidResponse(prepared);
    expect(prepared.status).toBe('completed');
    expect(upstream.requests).toHaveLength(0);
    let after = await scrape();
    expect(delta(before, after, 'loopgate_responses_total', { status: 'completed' })).toBe(1);
    expect(delta(before, after, 'loopgate_response_turns_count')).toBe(0);
    before = after;
    assertValidResponse(await client.responses.create({ model: 'm', input: 'hello' }));
    after = await scrape();
    expect(delta(before, after, 'loopgate_response_turns_count')).toBe(1);
    expect(delta(before, after, 'loopgate_response_turns_sum')).toBe(1);
  });
});
