import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidEvent } from '../support/openresponses-schema.ts';
import { chunk, ScriptedChatUpstream, sse, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/**
 * How OpenAI-compatible servers other than OpenAI tell of an error where a
 * completion or stream should be, each in its own words, and what the client
 * gets: the status the same refusal would have had as an HTTP status (a
 * request the upstream refused is a 400 the SDKs do not retry, not a 502
 * they retry), and the upstream's own message.
 */
const dialects: Record<string, UpstreamReply> = {
  // llama.cpp's server (since #16109) and vLLM: the status number in `code`, the word in `type`.
  llamaStream: { kind: 'sse', pieces: ['data: {"error":{"code":400,"message":"Failed to parse grammar: unexpected end","type":"invalid_request_error"}}\n\n', 'data: [DONE]\n\n'] },
  vllmStream: { kind: 'sse', pieces: ['data: {"error":{"object":"error","message":"Invalid tool schema","type":"BadRequestError","param":null,"code":400}}\n\n', 'data: [DONE]\n\n'] },
  // Groq: a code of its own, the status in `status_code`, and the model's malformed output.
  groqStream: { kind: 'sse', pieces: ['data: {"error":{"message":"Failed to call a function. Please adjust your prompt. See \'failed_generation\' for more details.","type":"invalid_request_error","code":"tool_use_failed","failed_generation":"<function=add>{\\"a\\": 1","status_code":400}}\n\n'] },
  // llama.cpp before late 2025: a field of its own, `error:`, then [DONE].
  llamaOldStream: { kind: 'sse', pieces: ['error: {"code":400,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"invalid_request_error"}\n\n', 'data: [DONE]\n\n'] },
  // LM Studio on a wrong path (and older Ollama): 200 and a bare string.
  lmStudioJson: { kind: 'json', body: { error: 'Unexpected endpoint or method. (POST /chat/completions)' } },
  vllmOverloaded: { kind: 'sse', pieces: ['data: {"error":{"object":"error","message":"CUDA out of memory","type":"InternalServerError","param":null,"code":500}}\n\n', 'data: [DONE]\n\n'] },
};

describe('upstream errors in the dialects of OpenAI-compatible servers', () => {
  let current: UpstreamReply = dialects.llamaStream!;
  const upstream = new ScriptedChatUpstream(() => current);
  let gateway: RunningGateway;

  beforeAll(async () => {
    gateway = await startGateway(await upstream.start());
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  async function refusal(reply: UpstreamReply, stream: boolean): Promise<{ status: number; error: { type: string; code: string | null; message: string; param: string | null } }> {
    current = reply;
    const answer = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'Hi', stream }) });
    const body = (await answer.json()) as unknown;
    assertErrorEnvelope(body);
    return { status: answer.status, error: body.error };
  }

  it.each([
    ['llama.cpp', 'llamaStream', 'Failed to parse grammar'],
    ['vLLM', 'vllmStream', 'Invalid tool schema'],
  ])('%s: a refusal in the stream with its status in `code` is a 400', async (_server, dialect, words) => {
    const { status, error } = await refusal(dialects[dialect]!, true);
    expect(status).toBe(400);
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_request_error', message: expect.stringContaining(words) });
  });

  it("OpenAI's own refusal in the stream keeps the field it names, as the same refusal as a 400 does", async () => {
    const { status, error } = await refusal({ kind: 'sse', pieces: ['data: {"error":{"message":"Invalid value for \'temperature\'.","type":"invalid_request_error","param":"temperature","code":"invalid_value"}}\n\n'] }, true);
    expect(status).toBe(400);
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_value', param: 'temperature' });
  });

  it("a Chat server's refusal names the field as the client's Responses request does (response_format is text.format)", async () => {
    const groq = { error: { message: 'json_schema response format is not supported by this model', type: 'invalid_request_error', param: 'response_format', code: 'json_validate_failed' } };
    for (const [stream, reply] of [[false, { kind: 'json', status: 400, body: groq }], [true, { kind: 'sse', pieces: [`data: ${JSON.stringify(groq)}\n\n`] }]] as const) {
      const { status, error } = await refusal(reply as UpstreamReply, stream);
      expect(status).toBe(400);
      expect(error).toMatchObject({ param: 'text.format', code: 'json_validate_failed' });
    }
  });

  it("Groq: `tool_use_failed` in the stream is the same 400 as unstreamed, with the model's failed generation", async () => {
    const { status, error } = await refusal(dialects.groqStream!, true);
    expect(status).toBe(400);
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 'tool_use_failed' });
    expect(error.message).toContain('failed_generation: <function=add>{"a": 1');
  });

  it("llama.cpp's older `error:` field is read: the context-size refusal is context_length_exceeded", async () => {
    const { status, error } = await refusal(dialects.llamaOldStream!, true);
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: 'context_length_exceeded', message: expect.stringContaining('exceeds the available context size') });
  });

  it("LM Studio's bare-string error in a 200 keeps its words", async () => {
    const { status, error } = await refusal(dialects.lmStudioJson!, false);
    expect(status).toBe(502);
    expect(error.message).toContain('Unexpected endpoint or method. (POST /chat/completions)');
  });

  it("a server's own failure stated as 500 stays a 502, with a code rather than the number", async () => {
    const { status, error } = await refusal(dialects.vllmOverloaded!, true);
    expect(status).toBe(502);
    expect(error).toMatchObject({ type: 'upstream_error', code: 'upstream_error', message: expect.stringContaining('CUDA out of memory') });
  });

  it('after content has started, the failure names a code, not the status number', async () => {
    current = { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: 'Hel' }), { error: { object: 'error', message: 'CUDA out of memory', type: 'InternalServerError', param: null, code: 500 } }], false) };
    const answer = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'Hi', stream: true }) });
    const events = (await answer.text())
      .split('\n\n')
      .flatMap((frame) => frame.split('\n').filter((line) => line.startsWith('data: {')))
      .map((line) => JSON.parse(line.slice(6)) as { type: string; response?: { status: string; error: { code: string; message: string } } });
    for (const event of events) assertValidEvent(event);
    const failed = events.find((event) => event.type === 'response.failed')!;
    expect(failed.response!.error).toMatchObject({ code: 'upstream_error', message: expect.stringContaining('CUDA out of memory') });
  });
});

describe('an error answer a proxy compressed though the gateway asked for none', () => {
  let server: Server;
  let gateway: RunningGateway;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(429, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'retry-after': '3' }).end(gzipSync(JSON.stringify({ error: { message: 'Slow down.', type: 'rate_limit_error' } }))));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    gateway = await startGateway(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
  });
  afterAll(async () => {
    await gateway.close();
    server.close();
  });

  it.each([false, true])('keeps its status and retry hint, and never puts its bytes in the message (stream: %s)', async (stream) => {
    const answer = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: 'Hi', stream }) });
    const body = (await answer.json()) as unknown;
    assertErrorEnvelope(body);
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toBe('3');
    expect(body.error.message).not.toMatch(/[\u0000-\u0008\u001f\ufffd]/);
  });
});
