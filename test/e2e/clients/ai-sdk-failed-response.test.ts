import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../../support/gateway.ts';
import { McpTestServer } from '../../support/mcp-test-server.ts';
import { assertValidResponseWithMcpItems } from '../../support/openresponses-schema.ts';
import type { RecordedRequest, UpstreamReply } from '../../support/scripted-chat-upstream.ts';
import { ScriptedChatUpstream } from '../../support/scripted-chat-upstream.ts';

/** A Chat completion calling the operator's `add`, then a 500 for the model call after it. */
function addThenFail(request: RecordedRequest): UpstreamReply {
  if (request.body.messages.some((message: { role: string }) => message.role === 'tool')) return { kind: 'json', status: 500, body: { error: { message: 'The server had an error.', type: 'server_error' } } };
  const call = { id: 'call_1', type: 'function', function: { name: 'calc__add', arguments: '{"a":2,"b":5}' } };
  return { kind: 'json', body: { id: 'c1', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [call] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 } } };
}

/**
 * A JSON response that failed after the gateway ran its tools is a 200 with
 * status `failed` (a retry would run them again). The AI SDK reads such an
 * answer's error only when it has a `type`, as an error envelope has:
 * without one it reported "Invalid JSON response" and lost what failed.
 */
describe('the AI SDK meeting a failed JSON response', () => {
  const upstream = new ScriptedChatUpstream(addThenFail);
  const mcp = new McpTestServer();
  let gateway: RunningGateway;
  beforeAll(async () => {
    const [url, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    gateway = await startGateway(url, { mcp: { servers: [{ name: 'calc', url: mcpUrl }] } });
  });
  afterAll(async () => {
    await gateway.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });

  it("generateText rejects with the gateway's own message, not retried; the tool ran once", async () => {
    const failed: any = await (await fetch(`${gateway.baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer k' }, body: JSON.stringify({ model: 'm', input: '2 + 5?' }) })).json();
    assertValidResponseWithMcpItems(failed);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'upstream_error', type: 'upstream_error' } });

    const openai = createOpenAI({ baseURL: gateway.baseURL, apiKey: 'k' });
    const rejected = await generateText({ model: openai.responses('m'), prompt: '2 + 5?' }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(APICallError.isInstance(rejected)).toBe(true);
    expect((rejected as APICallError).message).toBe(failed.error.message);
    expect((rejected as APICallError).isRetryable).toBe(false);
    expect(mcp.calls).toHaveLength(2);
  });
});
