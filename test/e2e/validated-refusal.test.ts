import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { chunk, ScriptedChatUpstream, sse, usageChunk, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

const SCHEMA = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'], additionalProperties: false };
const REFUSAL = "I'm sorry, I can't help with that.";

/** A Chat completion (not streamed) answering with `message`. */
const completion = (message: Record<string, unknown>, finish: string, completionTokens: number): UpstreamReply => ({
  kind: 'json',
  body: { id: 'chatcmpl-v', object: 'chat.completion', created: 1_760_000_000, model: 'm', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }], usage: { prompt_tokens: 5, completion_tokens: completionTokens, total_tokens: 5 + completionTokens } },
});

/** A gateway validating every JSON answer (3 attempts) in front of `upstream`, started and stopped with the suite; the client that reaches it. */
function validatingGateway(upstream: ScriptedChatUpstream): () => OpenAI {
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
  return () => client;
}

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
      : completion({ content: null, refusal: REFUSAL }, 'stop', 9),
  );
  const clientOf = validatingGateway(upstream);

  it('ends completed with the refusal after one model call, JSON and streamed', async () => {
    const client = clientOf();
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

/** A retried answer cut short by max_output_tokens: the report counts it and says why, not the hidden attempt's errors. */
describe('output validation and an answer cut short', () => {
  let calls = 0;
  // An invalid answer, then one cut short.
  const upstream = new ScriptedChatUpstream(() => (++calls % 2 === 1 ? completion({ content: '{"answer":"seven"}' }, 'stop', 5) : completion({ content: '{"answer":' }, 'length', 5)));
  const clientOf = validatingGateway(upstream);

  it('is the second attempt, not valid, cut short', async () => {
    const response: any = await clientOf().responses.create({ model: 'm', input: 'How many?', text: { format: { type: 'json_schema', name: 'result', schema: SCHEMA, strict: true } } });
    assertValidResponse(response);
    expect(response.status).toBe('incomplete');
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(response['loopgate:loop']).toEqual({ output_validation: { attempts: 2, valid: false, errors: ['The answer was cut short (max_output_tokens) before it could be judged.'] } });
  });
});
