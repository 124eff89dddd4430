import { connect } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants, parseSseText } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidResponse } from '../support/openresponses-schema.ts';
import { chunk, ScriptedChatUpstream, sse, textReply } from '../support/scripted-chat-upstream.ts';

async function post(gateway: RunningGateway, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  return postTo(`${gateway.baseURL}/responses`, body, headers);
}

async function postTo(url: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  const response = await fetch(url, { method: 'POST', headers, body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: (() => { try { return JSON.parse(text); } catch { return null; } })() };
}

function expectError(result: Awaited<ReturnType<typeof post>>, status: number, expected: { code?: string | null; param?: string | null; type?: string }) {
  expect(result.status, result.text).toBe(status);
  assertErrorEnvelope(result.json);
  expect(result.headers.get('x-request-id')).toBeTruthy();
  if (expected.code !== undefined) expect(result.json.error.code).toBe(expected.code);
  if (expected.param !== undefined) expect(result.json.error.param).toBe(expected.param);
  if (expected.type !== undefined) expect(result.json.error.type).toBe(expected.type);
}

describe('client errors', () => {
  const upstream = new ScriptedChatUpstream(textReply('ok'));
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway(await upstream.start(), { server: { host: '127.0.0.1', port: 0, bodyLimitBytes: 4096 } });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  const malformed: [string, unknown, string | null][] = [
    ['input is a number', { model: 'm', input: 5 }, 'input'],
    ['message content is a number', { model: 'm', input: [{ role: 'user', content: 5 }] }, 'input[0].content'],
    ['message content missing', { model: 'm', input: [{ type: 'message', role: 'user' }] }, 'input[0].content'],
    ['unknown role', { model: 'm', input: [{ type: 'message', role: 'wizard', content: 'x' }] }, 'input[0].role'],
    ['unknown item type', { model: 'm', input: [{ type: 'telepathy' }] }, 'input[0].type'],
    ['unknown content part', { model: 'm', input: [{ role: 'user', content: [{ type: 'input_audio' }] }] }, 'input[0].content[0].type'],
    ['output_text in a user message', { model: 'm', input: [{ role: 'user', content: [{ type: 'output_text', text: 'x' }] }] }, 'input[0].content[0].type'],
    ['input_image in a system message', { model: 'm', input: [{ role: 'system', content: [{ type: 'input_image', image_url: 'x' }] }] }, 'input[0].content[0].type'],
    ['bad image detail', { model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'x', detail: 'ultra' }] }] }, 'input[0].content[0].detail'],
    ['function_call without call_id', { model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input[0].call_id'],
    ['function_call with a bad name', { model: 'm', input: [{ type: 'function_call', call_id: 'c', name: 'a b', arguments: '{}' }] }, 'input[0].name'],
    ['function_call_output without output', { model: 'm', input: [{ type: 'function_call_output', call_id: 'c' }] }, 'input[0].output'],
    ['bad assistant phase', { model: 'm', input: [{ role: 'assistant', content: 'x', phase: 'draft' }] }, 'input[0].phase'],
    ['second item broken', { model: 'm', input: [{ role: 'user', content: 'ok' }, { role: 'user', content: [{ type: 'input_text' }] }] }, 'input[1].content[0].text'],
    ['an item id given twice', { model: 'm', input: [{ type: 'message', id: 'msg_a', role: 'user', content: 'one' }, { role: 'user', content: 'two' }, { type: 'item_reference', id: 'msg_a' }] }, 'input[2].id'],
    ['tool of an unknown type', { model: 'm', input: 'x', tools: [{ type: 'teleport' }] }, 'tools[0].type'],
    ['tool without a name', { model: 'm', input: 'x', tools: [{ type: 'function' }] }, 'tools[0].name'],
    ['tool parameters not an object', { model: 'm', input: 'x', tools: [{ type: 'function', name: 'f', parameters: 'x' }] }, 'tools[0].parameters'],
    ['tool_choice string unknown', { model: 'm', input: 'x', tool_choice: 'sometimes' }, 'tool_choice'],
    ['allowed_tools empty', { model: 'm', input: 'x', tool_choice: { type: 'allowed_tools', tools: [] } }, 'tool_choice.tools'],
    ['tool_choice naming a function not in tools', { model: 'm', input: 'x', tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'function', name: 'nope' } }, 'tool_choice.name'],
    ['tool_choice naming a function, with no tools', { model: 'm', input: 'x', tool_choice: { type: 'function', name: 'f' } }, 'tool_choice.name'],
    ['tool_choice required, with no tools', { model: 'm', input: 'x', tool_choice: 'required' }, 'tool_choice'],
    ['allowed_tools naming a function not in tools', { model: 'm', input: 'x', tools: [{ type: 'function', name: 'f' }], tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'f' }, { type: 'function', name: 'g' }] } }, 'tool_choice.tools[1].name'],
    ['text.format unknown', { model: 'm', input: 'x', text: { format: { type: 'xml' } } }, 'text.format.type'],
    ['temperature a string', { model: 'm', input: 'x', temperature: 'hot' }, 'temperature'],
    ['temperature above 2', { model: 'm', input: 'x', temperature: 9 }, 'temperature'],
    ['top_p below 0, with tools (the schema, not the fast path)', { model: 'm', input: 'x', top_p: -0.5, tools: [{ type: 'function', name: 'f' }] }, 'top_p'],
    ['presence_penalty above 2', { model: 'm', input: 'x', presence_penalty: 2.5 }, 'presence_penalty'],
    ['frequency_penalty below -2', { model: 'm', input: [{ role: 'user', content: 'x' }], frequency_penalty: -3 }, 'frequency_penalty'],
    ['max_output_tokens below 16', { model: 'm', input: 'x', max_output_tokens: 8 }, 'max_output_tokens'],
    ['top_logprobs above 20', { model: 'm', input: 'x', top_logprobs: 21 }, 'top_logprobs'],
    ['metadata value not a string', { model: 'm', input: 'x', metadata: { a: 1 } }, 'metadata.a'],
    ['reasoning effort unknown', { model: 'm', input: 'x', reasoning: { effort: 'extreme' } }, 'reasoning.effort'],
    ['truncation unknown', { model: 'm', input: 'x', truncation: 'sometimes' }, 'truncation'],
    ['service_tier unknown', { model: 'm', input: 'x', service_tier: 'gold' }, 'service_tier'],
    ['include unknown', { model: 'm', input: 'x', include: ['everything'] }, 'include[0]'],
    ['stream not a boolean', { model: 'm', input: 'x', stream: 'yes' }, 'stream'],
    ['safety_identifier too long', { model: 'm', input: 'x', safety_identifier: 'x'.repeat(65) }, 'safety_identifier'],
    ['no model and no default', { input: 'x' }, 'model'],
    ['no input at all', { model: 'm' }, 'input'],
    ['body is an array', [1, 2], null],
  ];
  it.each(malformed)('%s → 400 naming the parameter', async (_name, body, param) => {
    const result = await post(gateway, body);
    expectError(result, 400, { param, type: 'invalid_request_error' });
    expect(result.json.error.message.length).toBeGreaterThan(10);
  });

  it('a number given as text (in the body, or a query parameter, which is always text) is refused quoting what was sent', async () => {
    const body = await post(gateway, { model: 'm', input: 'x', temperature: 'hot' });
    expectError(body, 400, { param: 'temperature', code: 'invalid_value' });
    expect(body.json.error.message).toBe(`Invalid value for 'temperature': expected a number, got "hot".`);
    const query = await fetch(`${gateway.baseURL}/responses/resp_any/input_items?limit=ten`);
    const answer: any = await query.json();
    expect(query.status).toBe(400);
    expect(answer.error).toMatchObject({ param: 'limit', message: `Invalid value for 'limit': expected a whole number, got "ten".` });
  });

  it('a number outside its range is refused as OpenAI words it; the ends of the range are taken', async () => {
    const hot = await post(gateway, { model: 'm', input: 'x', temperature: 9 });
    expectError(hot, 400, { param: 'temperature', code: 'invalid_value' });
    expect(hot.json.error.message).toBe(`Invalid value for 'temperature': expected a value <= 2, but got 9 instead.`);
    const short = await post(gateway, { model: 'm', input: 'x', max_output_tokens: 8 });
    expect(short.json.error.message).toBe(`Invalid value for 'max_output_tokens': expected a value >= 16, but got 8 instead.`);
    for (const edges of [{ temperature: 0, top_p: 1, presence_penalty: -2, frequency_penalty: 2 }, { temperature: 2, top_p: 0, presence_penalty: 2, frequency_penalty: -2 }]) {
      const result = await post(gateway, { model: 'm', input: 'x', ...edges });
      expect(result.status, result.text).toBe(200);
      assertValidResponse(result.json);
      expect(result.json).toMatchObject({ temperature: edges.temperature, top_p: edges.top_p });
    }
  });

  it('malformed JSON → 400 invalid_json, saying where it broke', async () => {
    const truncated = await post(gateway, '{"model": "m", "input": ');
    expectError(truncated, 400, { code: 'invalid_json' });
    expect(truncated.json.error.message).toMatch(/^The request body is not valid JSON: Unexpected end of JSON input/);
    const missingComma = await post(gateway, '{"model": "m" "input": "x"}');
    expectError(missingComma, 400, { code: 'invalid_json' });
    expect(missingComma.json.error.message).toMatch(/after property value in JSON at position 14/);
  });

  it('text that is not UTF-8 is refused, never read with its characters replaced: another charset → 415, bytes that are no UTF-8 → 400', async () => {
    const latin1 = Buffer.from('{"model": "m", "input": "Caf\u00e9 cr\u00e8me"}', 'latin1');
    const upstreamCalls = upstream.requests.length;
    const declared = await postTo(`${gateway.baseURL}/responses`, latin1, { 'content-type': 'application/json; charset=iso-8859-1' });
    expectError(declared, 415, { code: 'unsupported_media_type' });
    expect(declared.json.error.message).toContain('UTF-8');
    const undeclared = await postTo(`${gateway.baseURL}/responses`, latin1);
    expectError(undeclared, 400, { code: 'invalid_json' });
    expect(undeclared.json.error.message).toContain('UTF-8');
    expect(upstream.requests.length).toBe(upstreamCalls);
    // UTF-8 said so, in any spelling, is read; a BOM is passed over.
    const utf8 = await postTo(`${gateway.baseURL}/responses`, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"model": "m", "input": "Café crème"}')]), { 'content-type': 'application/json; charset=UTF-8' });
    expect(utf8.status, utf8.text).toBe(200);
  });

  it('a key that could reach a prototype → 400 saying so, not that the JSON is invalid', async () => {
    for (const body of ['{"model": "m", "input": "x", "__proto__": {"admin": true}}', '{"model": "m", "input": "x", "constructor": {"prototype": {"admin": true}}}']) {
      const result = await post(gateway, body);
      expectError(result, 400, { code: 'invalid_json' });
      expect(result.json.error.message).toContain("could reach an object's prototype");
    }
  });

  it('empty body → 400', async () => {
    expectError(await post(gateway, ''), 400, { code: 'invalid_json' });
  });

  it('a body over the configured limit → 413', async () => {
    expectError(await post(gateway, { model: 'm', input: 'x'.repeat(10_000) }), 413, { code: 'request_too_large' });
  });

  it('a wrong content type → 415', async () => {
    expectError(await post(gateway, 'model=m', { 'content-type': 'text/plain' }), 415, { code: 'unsupported_media_type' });
  });

  it('a path the router cannot read → 400 in the error envelope, with a request id, not in Fastify\'s own shape', async () => {
    const get = async (path: string) => {
      const response = await fetch(`${gateway.baseURL}${path}`);
      const text = await response.text();
      return { status: response.status, headers: response.headers, text, json: JSON.parse(text) };
    };
    expectError(await get('/responses/%zz'), 400, { code: 'invalid_url', type: 'invalid_request_error' });
    const tooLong = await get(`/responses/resp_${'a'.repeat(300)}`);
    expectError(tooLong, 400, { code: 'invalid_value', type: 'invalid_request_error' });
    expect(tooLong.json.error.message).toContain('longer than 256 characters');
  });

  it('a request Node refuses before Fastify sees it → the error envelope on the socket, then the connection closed', async () => {
    const huge = await fetch(`${gateway.baseURL}/models`, { headers: { 'x-big': 'a'.repeat(20_000) } });
    expect(huge.status).toBe(431);
    const hugeBody = await huge.json();
    assertErrorEnvelope(hugeBody);
    expect(hugeBody.error.code).toBe('request_headers_too_large');
    expect(huge.headers.get('x-should-retry')).toBe('false');
    // Like every other answer: a request id, and readable by a page of an allowed origin (the default without keys: this machine's pages).
    expect(huge.headers.get('x-request-id')).toMatch(/^req_/);
    const fromPage = await fetch(`${gateway.baseURL}/models`, { headers: { origin: 'http://localhost:5173', 'x-big': 'a'.repeat(20_000) } });
    expect(fromPage.status).toBe(431);
    expect(fromPage.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(fromPage.headers.get('access-control-expose-headers')).toContain('x-request-id');

    const { port } = new URL(gateway.baseURL);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write('POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'));
      let text = '';
      socket.on('data', (piece) => (text += piece));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
    assertErrorEnvelope(body);
    expect(body.error).toMatchObject({ code: 'malformed_request', type: 'invalid_request_error' });
  });

  it('an unknown route → 404 in the error envelope', async () => {
    const response = await fetch(`${gateway.baseURL}/nothing/here`);
    const body = await response.json();
    expect(response.status).toBe(404);
    assertErrorEnvelope(body);
    expect(body.error.code).toBe('unknown_route');
    expect(response.headers.get('x-request-id')).toBeTruthy();
  });

  it("a misrouted request's 404 says what was likely meant; a doubled slash (a base URL ending in '/') reaches the route", async () => {
    const origin = new URL(gateway.baseURL).origin;
    const hint = async (path: string) => {
      const result = await postTo(`${origin}${path}`, { model: 'm', input: 'x' });
      expectError(result, 404, { code: 'unknown_route' });
      return result.json.error.message as string;
    };
    expect(await hint('/responses')).toContain('The API is under /v1');
    expect(await hint('/v1/responses/')).toContain('Leave out the trailing slash (/v1/responses)');
    expect(await hint('/v1/chat/completions')).toContain("serves OpenAI's Responses API (POST /v1/responses), not /v1/chat/completions");
    expect(await hint('/elsewhere')).toBe('Unknown route: POST /elsewhere.');
    // A trailing slash after a collection is no empty id: not "Response with id '' not found", nor a create read as an update of conversation ''.
    for (const [method, path] of [['POST', '/v1/conversations/'], ['GET', '/v1/conversations/'], ['GET', '/v1/responses/'], ['DELETE', '/v1/responses/'], ['GET', '/v1/models/']] as const) {
      const response = await fetch(`${origin}${path}`, { method, ...(method === 'POST' && { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ metadata: { a: 'b' } }) }) });
      const body = (await response.json()) as any;
      assertErrorEnvelope(body);
      expect([path, response.status, body.error.code]).toEqual([path, 404, 'unknown_route']);
      expect(body.error.message).toContain(`Leave out the trailing slash (${path.slice(0, -1)})`);
    }
    const doubled = await postTo(`${origin}/v1//responses`, { model: 'm', input: 'x' });
    expect(doubled.status, doubled.text).toBe(200);
    assertValidResponse(doubled.json);
  });

  it('previous_response_id that does not exist → 404 previous_response_not_found', async () => {
    expectError(await post(gateway, { model: 'm', input: 'x', previous_response_id: 'resp_missing' }), 404, { code: 'previous_response_not_found', param: 'previous_response_id' });
  });

  it('the SDK surfaces code, param and request id from the envelope', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
    const error = await client.responses.create({ model: 'm', input: [{ role: 'user', content: 5 as any }] }).catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe('input[0].content');
    expect(error.code).toBe('invalid_value');
    expect(error.requestID).toMatch(/^req_/);
  });

  it('a client-supplied x-request-id is kept', async () => {
    const result = await post(gateway, { model: 'm', input: 5 }, { 'content-type': 'application/json', 'x-request-id': 'client-trace-42' });
    expect(result.headers.get('x-request-id')).toBe('client-trace-42');
  });
});

describe('default model', () => {
  it('serves requests without a model when one is configured', async () => {
    const upstream = new ScriptedChatUpstream(textReply('ok'));
    const gateway = await startGateway(await upstream.start(), { defaultModel: 'house-model' });
    try {
      const result = await post(gateway, { input: 'x' });
      expect(result.status).toBe(200);
      expect(result.json.model).toBe('house-model');
      expect(upstream.requests[0]!.body.model).toBe('house-model');
    } finally {
      await gateway.close();
      await upstream.close();
    }
  });
});

describe('upstream failures', () => {
  const upstream = new ScriptedChatUpstream();
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway(await upstream.start(), {}, { firstByteTimeoutMs: 300 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });
  beforeEach(() => upstream.setScript(textReply('ok')));

  for (const stream of [false, true]) {
    const mode = stream ? 'streaming' : 'JSON';
    it(`${mode}: an upstream 400 passes through with its message and param`, async () => {
      upstream.setScript(() => ({ kind: 'json', status: 400, body: { error: { message: "Invalid 'messages[0].content'.", type: 'invalid_request_error', param: 'messages[0].content', code: 'invalid_value' } } }));
      const result = await post(gateway, { model: 'm', input: 'x', stream });
      expectError(result, 400, { code: 'invalid_value', param: 'messages[0].content', type: 'invalid_request_error' });
      expect(result.json.error.message).toBe("Invalid 'messages[0].content'.");
    });

    it(`${mode}: an upstream 429 stays a 429 with its retry-after`, async () => {
      upstream.setScript(() => ({ kind: 'json', status: 429, headers: { 'retry-after': '7' }, body: { error: { message: 'Slow down', type: 'rate_limit_error', code: 'rate_limit_exceeded' } } }));
      const result = await post(gateway, { model: 'm', input: 'x', stream });
      expectError(result, 429, { code: 'rate_limit_exceeded' });
      expect(result.headers.get('retry-after')).toBe('7');
    });

    it(`${mode}: an upstream 429's retry-after-ms passes too (the SDKs wait it, before retry-after)`, async () => {
      upstream.setScript(() => ({ kind: 'json', status: 429, headers: { 'retry-after-ms': '1250', 'retry-after': '2' }, body: { error: { message: 'Slow down', type: 'rate_limit_error', code: 'rate_limit_exceeded' } } }));
      const result = await post(gateway, { model: 'm', input: 'x', stream });
      expectError(result, 429, { code: 'rate_limit_exceeded' });
      expect(result.headers.get('retry-after-ms')).toBe('1250');
      expect(result.headers.get('retry-after')).toBe('2');
    });

    it(`${mode}: an upstream 503 that says when to come back is a 502 with that retry-after`, async () => {
      upstream.setScript(() => ({ kind: 'json', status: 503, headers: { 'retry-after': '3' }, body: { error: { message: 'Down for maintenance' } } }));
      const result = await post(gateway, { model: 'm', input: 'x', stream });
      expectError(result, 502, { code: 'upstream_error', type: 'upstream_error' });
      expect(result.headers.get('retry-after')).toBe('3');
    });

    it(`${mode}: an upstream answering 200 with a web page (a wrong base URL, a proxy's page) → 502 upstream_invalid_response, before any stream starts`, async () => {
      upstream.setScript(() => ({ kind: 'json', status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body>Welcome to nginx!</body></html>' }));
      expectError(await post(gateway, { model: 'm', input: 'x', stream }), 502, { code: 'upstream_invalid_response', type: 'upstream_error' });
    });

    it(`${mode}: an upstream 500 → 502 upstream_error`, async () => {
      upstream.setScript(() => ({ kind: 'json', status: 500, body: { error: { message: 'kaboom' } } }));
      const result = await post(gateway, { model: 'm', input: 'x', stream });
      expectError(result, 502, { code: 'upstream_error', type: 'upstream_error' });
      expect(result.json.error.message).toContain('kaboom');
    });

    it(`${mode}: an upstream that never answers → 504 upstream_timeout`, async () => {
      upstream.setScript(() => ({ kind: 'hang' }));
      expectError(await post(gateway, { model: 'm', input: 'x', stream }), 504, { code: 'upstream_timeout' });
    });

    it(`${mode}: an upstream that drops the connection → 502`, async () => {
      upstream.setScript(() => ({ kind: 'destroy' }));
      expectError(await post(gateway, { model: 'm', input: 'x', stream }), 502, { type: 'upstream_error' });
    });

    it(`${mode}: an upstream body that is not JSON → 502 upstream_invalid_response`, async () => {
      upstream.setScript((request) => (request.body.stream ? { kind: 'sse', pieces: ['data: <html>oops</html>\n\n'] } : { kind: 'json', body: '<html>oops</html>' }));
      expectError(await post(gateway, { model: 'm', input: 'x', stream }), 502, { code: 'upstream_invalid_response' });
    });
  }

  it('an unreachable upstream → 502 upstream_unreachable', async () => {
    const dead = await startGateway('http://127.0.0.1:9/v1');
    try {
      expectError(await post(dead, { model: 'm', input: 'x' }), 502, { code: 'upstream_unreachable' });
      expectError(await post(dead, { model: 'm', input: 'x', stream: true }), 502, { code: 'upstream_unreachable' });
    } finally {
      await dead.close();
    }
  });

  it('streaming: an error frame before any content gets a real status, not a 200', async () => {
    upstream.setScript(() => ({ kind: 'sse', pieces: ['data: {"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}\n\n'] }));
    expectError(await post(gateway, { model: 'm', input: 'x', stream: true }), 429, { code: 'rate_limit_exceeded' });
  });

  it('streaming: a failure after the first chunk ends the stream with response.failed', async () => {
    upstream.setScript(() => ({ kind: 'sse', pieces: [...sse([chunk({ role: 'assistant', content: 'Hel' })], false), 'data: {"error":{"message":"overloaded","type":"server_error","code":"server_error"}}\n\n'] }));
    const result = await post(gateway, { model: 'm', input: 'x', stream: true });
    expect(result.status).toBe(200);
    const { events, done } = parseSseText(result.text);
    const final = assertEventStreamInvariants(events);
    expect(done).toBe(true);
    expect(events.at(-1)!.type).toBe('response.failed');
    expect(final.error).toEqual({ code: 'server_error', message: "The upstream 'openai' reported: overloaded", type: 'server_error' });
    expect(final.output[0].content[0].text).toBe('Hel');
  });

  it('streaming: a connection dropped mid-stream ends with response.failed', async () => {
    upstream.setScript(() => ({ kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: 'Hel' })], false), endAfter: false, pauseMs: 10 }));
    const pending = post(gateway, { model: 'm', input: 'x', stream: true });
    await new Promise((resolve) => setTimeout(resolve, 150));
    await upstream.close();
    const result = await pending;
    const { events } = parseSseText(result.text);
    const final = assertEventStreamInvariants(events);
    expect(final.status).toBe('failed');
    await upstream.start();
  });
});
