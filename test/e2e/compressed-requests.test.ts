import { brotliCompressSync, deflateSync, gzipSync, zstdCompressSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants, parseSseText } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertErrorEnvelope, assertValidResponse } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream, textReply } from '../support/scripted-chat-upstream.ts';

/** Request bodies sent compressed (`Content-Encoding`), as Codex and HTTP clients with compression on send them. */
describe('compressed request bodies', () => {
  const upstream = new ScriptedChatUpstream(textReply('Decoded.'));
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway(await upstream.start(), { server: { host: '127.0.0.1', port: 0, bodyLimitBytes: 8192 } });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  const send = async (body: Buffer, coding: string) => {
    const response = await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': coding }, body });
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, json: (() => { try { return JSON.parse(text); } catch { return null; } })() };
  };
  const request = (extra: Record<string, unknown> = {}) => Buffer.from(JSON.stringify({ model: 'm', input: 'What is in this body?', ...extra }));

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
    ['zstd', zstdCompressSync],
  ] as const)('a %s body is read decompressed: the model gets its input and the client a whole response', async (coding, compress) => {
    const result = await send(compress(request()), coding);
    expect(result.status, result.text).toBe(200);
    assertValidResponse(result.json);
    expect(result.json.output[0].content[0].text).toBe('Decoded.');
    expect(upstream.requests.at(-1)!.body.messages).toEqual([{ role: 'user', content: 'What is in this body?' }]);
  });

  it('a coding is matched without regard to case, and a streamed response is the usual event stream', async () => {
    const result = await send(gzipSync(request({ stream: true })), 'GZip');
    expect(result.status, result.text).toBe(200);
    const { events, done } = parseSseText(result.text);
    expect(done).toBe(true);
    expect(assertEventStreamInvariants(events).output[0].content[0].text).toBe('Decoded.');
  });

  it('a coding the gateway cannot read → 415 that says which it can, and nothing reaches the upstream', async () => {
    const result = await send(request(), 'lzma');
    expect(result.status, result.text).toBe(415);
    assertErrorEnvelope(result.json);
    expect(result.json.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_content_encoding' });
    expect(result.json.error.message).toContain("'lzma'");
    expect(result.headers.get('accept-encoding')).toBe('gzip, deflate, br, zstd');
    expect(upstream.requests).toEqual([]);
  });

  it('a body that is not what its coding says → 400 invalid_content_encoding, not a JSON error', async () => {
    for (const body of [request(), gzipSync(request()).subarray(0, 20)]) {
      const result = await send(body, 'gzip');
      expect(result.status, result.text).toBe(400);
      assertErrorEnvelope(result.json);
      expect(result.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_content_encoding' });
      expect(result.json.error.message).toContain('gzip');
    }
    expect(upstream.requests).toEqual([]);
  });

  it('the body limit counts the decompressed bytes: a small bomb is a 413', async () => {
    const bomb = gzipSync(Buffer.from(JSON.stringify({ model: 'm', input: ' '.repeat(1_000_000) })));
    expect(bomb.length).toBeLessThan(8192);
    const result = await send(bomb, 'gzip');
    expect(result.status, result.text).toBe(413);
    assertErrorEnvelope(result.json);
    expect(result.json.error.code).toBe('request_too_large');
    expect(upstream.requests).toEqual([]);
  });

  it('malformed JSON inside a valid coding is reported as JSON, with where it broke', async () => {
    const result = await send(gzipSync(Buffer.from('{"model": "m" "input": "x"}')), 'gzip');
    expect(result.status, result.text).toBe(400);
    expect(result.json.error).toMatchObject({ code: 'invalid_json' });
    expect(result.json.error.message).toMatch(/position 14/);
  });
});
