import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { convertToGeminiRequest } from '../../src/providers/gemini/convert-to-gemini-request.ts';
import { GeminiProvider } from '../../src/providers/gemini/gemini-provider.ts';
import { decodeSignature, encodeSignature } from '../../src/providers/gemini/thought-signatures.ts';
import type { TurnRequest } from '../../src/providers/provider.ts';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { ScriptedChatUpstream, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { collectLoopEvents } from '../support/turn-helpers.ts';
import { turnRequest } from '../support/turn-request.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/gemini/${name}`, import.meta.url), 'utf8');

/** Recorded-format Gemini answers, served over HTTP, through the provider and the event pipeline. */
describe('Gemini generateContent → OpenResponses events', () => {
  const upstream = new ScriptedChatUpstream();
  let provider: GeminiProvider;

  beforeAll(async () => {
    const url = await upstream.start();
    provider = new GeminiProvider({ name: 'gemini', baseUrl: new URL(url).origin, apiKey: 'AIza-test', apiVersion: 'v1beta', connections: 4, connectTimeoutMs: 2_000, firstByteTimeoutMs: 5_000, idleTimeoutMs: 5_000 });
  });
  afterAll(async () => {
    await provider.close();
    await upstream.close();
  });

  async function run(reply: UpstreamReply, overrides: Partial<TurnRequest> = {}) {
    upstream.setScript(() => reply);
    const signal = new AbortController().signal;
    const events = await collectLoopEvents(await provider.startTurn(turnRequest({ model: 'gemini-2.5-flash', stream: true, ...overrides }), signal), { model: 'gemini-2.5-flash' }, signal);
    return assertEventStreamInvariants(events);
  }
  const streamed = (name: string, pieceSize = 31): UpstreamReply => {
    const text = fixture(name);
    const pieces: string[] = [];
    for (let offset = 0; offset < text.length; offset += pieceSize) pieces.push(text.slice(offset, offset + pieceSize));
    return { kind: 'sse', pieces };
  };

  it('thought summaries become reasoning, text a message; the text part\'s signature is kept; usage counts thinking and cache', async () => {
    const response = await run(streamed('thinking-text.sse'), { reasoningEffort: 'low' });
    expect(response.status).toBe('completed');
    expect(response.output.map((item: any) => item.type)).toEqual(['reasoning', 'message', 'reasoning']);
    expect(response.output[0].content).toEqual([{ type: 'reasoning_text', text: '**Weighing the question**\n\nThe user asks why the sky is blue. Rayleigh scattering explains it.' }]);
    expect(response.output[1].content[0].text).toBe('Sunlight scatters off air molecules; blue light scatters most.');
    expect(decodeSignature(response.output[2].encrypted_content)).toEqual({ part: 'text', signature: 'CiQBVKhc7sig-text-Zq0a9yLkQw==' });
    expect(response.usage).toEqual({ input_tokens: 24, output_tokens: 134, total_tokens: 158, input_tokens_details: { cached_tokens: 8 }, output_tokens_details: { reasoning_tokens: 123 } });
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(sent.headers['x-goog-api-key']).toBe('AIza-test');
    expect(sent.body).toEqual({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { thinkingConfig: { includeThoughts: true, thinkingBudget: 2_048 } } });
  });

  it('parallel function calls without ids get unique ids; the signature is tied to the call it came on', async () => {
    const response = await run(streamed('parallel-calls.sse'));
    const calls = response.output.filter((item: any) => item.type === 'function_call');
    expect(calls.map((call: any) => [call.name, call.arguments])).toEqual([
      ['get_weather', '{"city":"Oslo"}'],
      ['get_weather', '{"city":"Paris","unit":"celsius"}'],
    ]);
    expect(new Set(calls.map((call: any) => call.call_id)).size).toBe(2);
    const signed = response.output.find((item: any) => item.type === 'reasoning');
    expect(decodeSignature(signed.encrypted_content)).toEqual({ part: 'call', callId: calls[0].call_id, signature: 'CiIBVKhc7sig-call-3PLg2yHBQ==', name: calls[0].name, arguments: calls[0].arguments });
    expect(response.usage.output_tokens_details.reasoning_tokens).toBe(60);
  });

  it('a blocked prompt and a SAFETY stop end incomplete (content_filter); MAX_TOKENS ends incomplete (max_output_tokens)', async () => {
    const blocked = await run(streamed('prompt-blocked.sse'));
    expect(blocked.status).toBe('incomplete');
    expect(blocked.incomplete_details).toEqual({ reason: 'content_filter' });
    const unsafe = await run(streamed('safety-stop.sse'));
    expect(unsafe.incomplete_details).toEqual({ reason: 'content_filter' });
    expect(unsafe.output[0].content[0].text).toBe('Here is how');
    const limited = await run(streamed('max-tokens.sse'));
    expect(limited.status).toBe('incomplete');
    expect(limited.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });

  it('a finish the gateway does not know that left no answer (MALFORMED_FUNCTION_CALL) fails, naming it, rather than completing empty', async () => {
    const malformed = await run(streamed('malformed-function-call.sse'));
    expect(malformed.status).toBe('failed');
    expect(malformed.output).toEqual([]);
    expect(malformed.error).toEqual({ code: 'upstream_no_answer', message: 'The model stopped without an answer (finish reason "MALFORMED_FUNCTION_CALL").', type: 'upstream_error' });
  });

  it('non-streamed turns call generateContent and read the whole answer', async () => {
    const response = await run({ kind: 'json', body: JSON.parse(fixture('generate-content.json')) }, { stream: false, textFormat: { type: 'json_schema', name: 'answer', description: 'The sum asked for.', schema: { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'], additionalProperties: false }, strict: true } });
    expect(response.output[0].content[0].text).toBe('{"answer": 42}');
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    // The format's description, which Gemini has no field for, goes in the schema, where the model reads it.
    expect(sent.body.generationConfig).toEqual({ responseMimeType: 'application/json', responseJsonSchema: { description: 'The sum asked for.', type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'], additionalProperties: false } });
  });

  it('counts input tokens with countTokens, sent the request a turn would send', async () => {
    upstream.setScript(() => ({ kind: 'json', body: { totalTokens: 31, promptTokensDetails: [{ modality: 'TEXT', tokenCount: 31 }] } }));
    const tokens = await provider.countInputTokens(turnRequest({ model: 'gemini-2.5-flash', instructions: 'Be brief.', maxOutputTokens: 50 }), new AbortController().signal);
    expect(tokens).toBe(31);
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/gemini-2.5-flash:countTokens');
    expect(sent.body).toEqual({ generateContentRequest: { model: 'models/gemini-2.5-flash', contents: [{ role: 'user', parts: [{ text: 'hi' }] }], systemInstruction: { parts: [{ text: 'Be brief.' }] } } });
  });

  it('errors: a 429 keeps its status and Google\'s message; an unknown model is model_not_found; a stream cut short fails the response', async () => {
    upstream.setScript(() => ({ kind: 'json', status: 429, body: JSON.parse(fixture('error-429.json')) }));
    const limited = await provider.startTurn(turnRequest({ model: 'gemini-2.5-flash', stream: true }), new AbortController().signal).catch((error) => error);
    expect(limited).toBeInstanceOf(GatewayError);
    expect(limited).toMatchObject({ status: 429, code: 'resource_exhausted', message: 'Resource has been exhausted (e.g. check quota).' });
    // Google says when to come back in the body's RetryInfo: passed on as the headers the SDKs wait by.
    const quota = { error: { code: 429, message: 'You exceeded your current quota.', status: 'RESOURCE_EXHAUSTED', details: [{ '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [] }, { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s' }] } };
    upstream.setScript(() => ({ kind: 'json', status: 429, body: quota }));
    const told = await provider.startTurn(turnRequest({ model: 'gemini-2.5-flash', stream: true }), new AbortController().signal).catch((error) => error);
    expect(told).toMatchObject({ status: 429, headers: { 'retry-after': '37', 'retry-after-ms': '37000' } });

    upstream.setScript(() => ({ kind: 'json', status: 404, body: { error: { code: 404, message: 'models/gemini-nope is not found for API version v1beta, or is not supported for generateContent.', status: 'NOT_FOUND' } } }));
    const missing = await provider.startTurn(turnRequest({ model: 'gemini-nope', stream: true }), new AbortController().signal).catch((error) => error);
    expect(missing).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });

    // Google's overload is a 503 with a retry hint and its status word, as a status or in the first frame alike; its other failures a 502.
    const overloaded = { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } };
    upstream.setScript(() => ({ kind: 'json', status: 503, body: overloaded }));
    const busy = await provider.startTurn(turnRequest({ model: 'gemini-2.5-flash', stream: true }), new AbortController().signal).catch((error) => error);
    expect(busy).toMatchObject({ status: 503, type: 'server_error', code: 'unavailable', headers: { 'retry-after': '2' } });
    expect(busy.message).toContain('The model is overloaded');
    upstream.setScript(() => ({ kind: 'sse', pieces: [`data: ${JSON.stringify(overloaded)}\r\n\r\n`] }));
    const busyFrame = await provider.startTurn(turnRequest({ model: 'gemini-2.5-flash', stream: true }), new AbortController().signal).catch((error) => error);
    expect(busyFrame).toMatchObject({ status: 503, type: 'server_error', code: 'unavailable', headers: { 'retry-after': '2' } });
    upstream.setScript(() => ({ kind: 'json', status: 500, body: { error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } } }));
    const broken = await provider.startTurn(turnRequest({ model: 'gemini-2.5-flash', stream: true }), new AbortController().signal).catch((error) => error);
    expect(broken).toMatchObject({ status: 502, code: 'internal' });

    const text = fixture('thinking-text.sse');
    const cut = await run({ kind: 'sse', pieces: [text.slice(0, text.lastIndexOf('data:'))] });
    expect(cut.status).toBe('failed');
    expect(cut.error.code).toBe('upstream_stream_truncated');

    upstream.setScript(() => ({ kind: 'sse', pieces: ['data: not json\r\n\r\n'] }));
    const garbled = await provider.startTurn(turnRequest({ model: 'gemini-2.5-flash', stream: true }), new AbortController().signal).catch((error) => error);
    expect(garbled).toMatchObject({ status: 502, code: 'upstream_invalid_response' });
  });
});

describe('TurnRequest → generateContent request', () => {
  it("reasoning effort as a thinking budget within what the model takes: Flash up to 24,576, Pro never off", () => {
    const budget = (model: string, effort: string) => convertToGeminiRequest(turnRequest({ model, reasoningEffort: effort })).generationConfig?.thinkingConfig?.thinkingBudget;
    expect(budget('gemini-2.5-flash', 'max')).toBe(24_576);
    expect(budget('gemini-2.5-flash', 'none')).toBe(0);
    expect(budget('gemini-2.5-flash-lite', 'minimal')).toBe(512);
    expect(budget('gemini-2.5-pro', 'none')).toBe(128);
    expect(convertToGeminiRequest(turnRequest({ model: 'gemini-2.5-pro', reasoningEffort: 'none' })).generationConfig?.thinkingConfig).toEqual({ thinkingBudget: 128 });
    expect(budget('gemini-2.5-pro', 'max')).toBe(32_768);
    expect(budget('gemini-2.5-pro', 'medium')).toBe(8_192);
  });

  it('inline images in any data URL spelling, as what their bytes are (a JPEG declared as PNG goes as image/jpeg)', () => {
    const jpeg = '/9j/4AAQSkZJRgABAQ==';
    const body = convertToGeminiRequest(
      turnRequest({ model: 'gemini-2.5-pro', items: [{ type: 'message', role: 'user', content: [`DATA:IMAGE/PNG;charset=utf-8;BASE64,${jpeg}`, `data:image/png;base64,${jpeg}`].map((image_url) => ({ type: 'input_image' as const, image_url, detail: 'auto' as const })) }] }),
    );
    expect(body.contents[0]!.parts).toEqual(Array(2).fill({ inlineData: { mimeType: 'image/jpeg', data: jpeg } }));
  });

  it('system, images, calls with their signatures and results, tools and tool_choice', () => {
    const body = convertToGeminiRequest(
      turnRequest({
        model: 'gemini-2.5-pro',
        instructions: 'Be brief.',
        items: [
          { type: 'message', role: 'developer', content: 'Use metric units.' },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is here?' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0K', detail: 'auto' }, { type: 'input_image', image_url: 'https://example.com/cat.webp', detail: 'auto' }] },
          { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: encodeSignature({ part: 'thought', text: 'Look at it.', signature: 'sig-thought' }) },
          { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: encodeSignature({ part: 'call', callId: 'call_a', signature: 'sig-call' }) },
          { type: 'reasoning', id: 'rs_3', summary: [], encrypted_content: 'anthropic.thinking.v1:e30=' },
          { type: 'function_call', call_id: 'call_a', name: 'weather', arguments: '{"city":"Oslo"}' },
          { type: 'function_call', call_id: 'call_b', name: 'weather', arguments: '{"city":"Rome"}' },
          { type: 'function_call_output', call_id: 'call_a', output: 'cold' },
          { type: 'function_call_output', call_id: 'call_b', output: 'warm' },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Cold and warm.', annotations: [] }] },
          { type: 'reasoning', id: 'rs_4', summary: [], encrypted_content: encodeSignature({ part: 'text', signature: 'sig-text' }) },
          { type: 'message', role: 'user', content: 'Thanks' },
        ] as TurnRequest['items'],
        tools: [{ type: 'function', name: 'weather', description: 'Weather by city', parameters: { type: 'object', properties: { city: { type: 'string' } }, additionalProperties: false }, strict: true }],
        toolChoice: { type: 'function', name: 'weather' },
        maxOutputTokens: 100,
        temperature: 0.2,
      }),
    );
    expect(body).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.\n\nUse metric units.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'What is here?' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0K' } }, { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp' } }] },
        {
          role: 'model',
          parts: [
            { text: 'Look at it.', thought: true, thoughtSignature: 'sig-thought' },
            { functionCall: { id: 'call_a', name: 'weather', args: { city: 'Oslo' } }, thoughtSignature: 'sig-call' },
            { functionCall: { id: 'call_b', name: 'weather', args: { city: 'Rome' } } },
          ],
        },
        { role: 'user', parts: [{ functionResponse: { id: 'call_a', name: 'weather', response: { output: 'cold' } } }, { functionResponse: { id: 'call_b', name: 'weather', response: { output: 'warm' } } }] },
        { role: 'model', parts: [{ text: 'Cold and warm.', thoughtSignature: 'sig-text' }] },
        { role: 'user', parts: [{ text: 'Thanks' }] },
      ],
      tools: [{ functionDeclarations: [{ name: 'weather', description: 'Weather by city', parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, additionalProperties: false } }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['weather'] } },
      generationConfig: { maxOutputTokens: 100, temperature: 0.2 },
    });
  });

  it('reasoning summaries asked for without an effort turn thoughts on; files are labelled by their kind, not all as PDF', () => {
    expect(convertToGeminiRequest(turnRequest({ reasoningSummary: 'auto' })).generationConfig).toEqual({ thinkingConfig: { includeThoughts: true } });
    const file = (part: Record<string, unknown>) => convertToGeminiRequest(turnRequest({ items: [{ type: 'message', role: 'user', content: [{ type: 'input_file', ...part }] }] as TurnRequest['items'], historyLength: 0 })).contents[0]!.parts[0];
    expect(file({ filename: 'table.csv', file_data: 'YSxiCjEsMg==' })).toEqual({ inlineData: { mimeType: 'text/csv', data: 'YSxiCjEsMg==' } });
    expect(file({ filename: 'notes.md', file_data: 'IyBUaXRsZQ==' })).toEqual({ inlineData: { mimeType: 'text/markdown', data: 'IyBUaXRsZQ==' } });
    expect(file({ file_url: 'https://example.com/talk.mp3' })).toMatchObject({ fileData: { mimeType: 'audio/mpeg' } });
    expect(file({ file_url: 'gs://bucket/data.csv' })).toMatchObject({ fileData: { mimeType: 'text/csv' } });
    expect(file({ file_url: 'https://example.com/paper' })).toMatchObject({ fileData: { mimeType: 'application/pdf' } });
  });

  it('tool_choice modes; an output whose call is unknown is a clear 400', () => {
    const tools = [{ type: 'function' as const, name: 'a', parameters: { type: 'object' }, strict: false }];
    expect(convertToGeminiRequest(turnRequest({ tools, toolChoice: 'none' })).toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(convertToGeminiRequest(turnRequest({ tools, toolChoice: 'required' })).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    // Google takes allowedFunctionNames only with ANY: allowed_tools under auto shows the model the allowed functions alone.
    const both = [...tools, { type: 'function' as const, name: 'b', parameters: { type: 'object' }, strict: false }];
    const auto = convertToGeminiRequest(turnRequest({ tools: both, toolChoice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'a' }] } }));
    expect(auto.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(auto.tools![0]!.functionDeclarations.map((declaration) => declaration.name)).toEqual(['a']);
    expect(convertToGeminiRequest(turnRequest({ tools: both, toolChoice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'a' }] } })).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['a'] } });
    expect(() => convertToGeminiRequest(turnRequest({ items: [{ type: 'function_call_output', call_id: 'call_x', output: 'x' }] as TurnRequest['items'], historyLength: 0 }))).toThrow(
      expect.objectContaining({ status: 400, param: 'input[0].call_id' }),
    );
  });
});
