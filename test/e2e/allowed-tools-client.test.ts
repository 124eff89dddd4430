import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';

const tool = (name: string) => ({ type: 'function' as const, name, strict: false, parameters: { type: 'object', properties: {} } });

/**
 * `allowed_tools` is a hard constraint (OpenResponses: "any tool call to a
 * tool not listed MUST be rejected or suppressed by the server"), also when
 * every tool is the client's and nothing runs on the server: a call outside
 * it was handed to the client to run.
 */
describe('allowed_tools with only client tools', () => {
  const upstream = new ScriptedChatUpstream(() => ({
    kind: 'json',
    body: {
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_ok', type: 'function', function: { name: 'get_weather', arguments: '{}' } }, { id: 'call_no', type: 'function', function: { name: 'delete_everything', arguments: '{}' } }] },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
    },
  }));
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gateway = await startGateway(await upstream.start());
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('a call outside it is answered with an error, never handed to the client; the allowed one is', async () => {
    const response = await client.responses.create({
      model: 'm',
      input: 'Weather?',
      tools: [tool('get_weather'), tool('delete_everything')],
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'get_weather' }] },
    });
    assertValidResponse(response);
    expect(response.status).toBe('requires_action');
    const outputs = response.output.filter((item) => item.type === 'function_call_output');
    expect(outputs).toEqual([expect.objectContaining({ call_id: 'call_no', output: expect.stringContaining('not among the allowed tools') })]);
    const answered = new Set(outputs.map((item) => (item as { call_id: string }).call_id));
    const pending = response.output.filter((item) => item.type === 'function_call' && !answered.has(item.call_id));
    expect(pending).toEqual([expect.objectContaining({ name: 'get_weather', call_id: 'call_ok' })]);
  });
});
