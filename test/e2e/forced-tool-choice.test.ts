import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { ScriptedChatUpstream, textCompletion, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';

/**
 * A `tool_choice` that forces a tool applies until the response's tools have
 * run: a model that obeys it, forced on every call of the server-side loop,
 * called a tool each turn until `max_turns`.
 */
describe('a forced tool_choice in the server-side loop', () => {
  const mcp = new McpTestServer();
  /** An obedient model: it calls `tools__add` whenever the call forces a tool, and answers otherwise. */
  const upstream = new ScriptedChatUpstream((request: RecordedRequest): UpstreamReply => {
    const choice = request.body.tool_choice;
    const forced = choice === 'required' || (typeof choice === 'object' && choice !== null);
    if (!forced) return textCompletion('The sum is 3.');
    return {
      kind: 'json',
      body: {
        id: 'chatcmpl-call',
        object: 'chat.completion',
        created: 1_760_000_000,
        model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: `call_${upstream.requests.length}`, type: 'function', function: { name: 'tools__add', arguments: '{"a":1,"b":2}' } }] }, finish_reason: 'tool_calls' }],
        usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
      },
    };
  });
  let gateway: RunningGateway;
  let client: OpenAI;

  beforeAll(async () => {
    const [url, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    gateway = await startGateway(url, { mcp: { callItems: 'function', servers: [{ name: 'tools', url: mcpUrl, allowedTools: ['add'] }] } });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 });
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    mcp.calls.length = 0;
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it.each([
    ['required', 'required' as const, 'required'],
    ['a named function', { type: 'function' as const, name: 'tools__add' }, { type: 'function', function: { name: 'tools__add' } }],
  ])('%s: the first call is forced, the calls after the tool ran are auto, and the response completes with the answer', async (_name, tool_choice, sent) => {
    const response = await client.responses.create({ model: 'm', input: 'What is 1 + 2?', tool_choice });
    assertValidResponse(response);
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe('The sum is 3.');
    expect(mcp.calls).toHaveLength(1);
    expect(upstream.requests.map((request) => request.body.tool_choice)).toEqual([sent, 'auto']);
    // The response still says what the client asked for.
    expect(response.tool_choice).toEqual(tool_choice);
  });
});
