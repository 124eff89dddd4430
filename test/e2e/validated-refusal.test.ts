import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { chunk, ScriptedChatUpstream, sse, usageChunk } from '../support/scripted-chat-upstream.ts';

const SCHEMA = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'], additionalProperties: false };
const REFUSAL = "I'm sorry, I can't help with that.";

/**
 * A Chat model's refusal (`message.refusal`) under a JSON schema with output
 * validation on: the refusal is the model's answer, as OpenAI returns it — a
 * completed response with a `refusal` part, after one model call — not an
 * invalid answer to send back for another try (asked again it refuses
 * again, each attempt billed).
 */
describe('output validation and a refusal', () => {
  const upstream = new ScriptedChatUpstream((request) =>
    request.body.stream
      ? { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: null }), chunk({ refusal: REFUSAL }), chunk({}, 'stop'), usageChunk(5, 9)]) }
      : { kind: 'json', body: { id: 'chatcmpl-r', object: 'chat.completion', created: 1_760_000_000, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: null, refusal: REFUSAL }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 9, total_tokens: 14 } } },
  );
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gateway = await startGateway(await upstream.start(), { loop: { outputValidation: { enabled: true, maxAttempts: 3 } } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'unused', maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('ends completed with the refusal after one model call, JSON and streamed', async () => {
    const body = { model: 'm', input: 'How many?', text: { format: { type: 'json_schema' as const, name: 'result', schema: SCHEMA, strict: true } } };
    const json = await client.responses.create(body);
    assertValidResponse(json);
    expect(upstream.requests).toHaveLength(1);
    const events: any[] = [];
    for await (const event of await client.responses.create({ ...body, stream: true })) events.push(event);
    const streamed = assertEventStreamInvariants(events);
    expect(upstream.requests).toHaveLength(2);
    for (const response of [json, streamed] as any[]) {
      expect(response.status).toBe('completed');
      expect(response.output).toHaveLength(1);
      expect(response.output[0].content).toEqual([{ type: 'refusal', refusal: REFUSAL }]);
      expect(response.usage.output_tokens).toBe(9);
    }
  });
});
