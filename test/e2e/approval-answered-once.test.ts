import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { parseSseText } from '../support/event-invariants.ts';
import { assertErrorEnvelope, assertValidResponseWithMcpItems, assertValidEventWithMcpItems } from '../support/openresponses-schema.ts';
import { flavors, scriptModel } from '../support/provider-flavors.ts';
import { acquireRedis, type TestRedis } from '../support/redis.ts';
import { ScriptedChatUpstream } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

const flavor = flavors.find((candidate) => candidate.name === 'openai-chat')!;

/**
 * An approval request is answered once, whichever continuation answers it:
 * the same paused response continued twice (a repeated request, two clients
 * at once on two replicas, an SDK retry) ran the gated call each time — a
 * call a human approved once, gated because it writes.
 */
describe('an approval request is answered once, across continuations and replicas', () => {
  const upstream = new ScriptedChatUpstream();
  const ops = new McpTestServer('streamable', { records: true });
  let redis: TestRedis;
  let replicas: RunningGateway[];
  let a: OpenAI;
  let b: OpenAI;

  beforeAll(async () => {
    redis = await acquireRedis();
    const [url, opsUrl] = await Promise.all([upstream.start(), ops.start()]);
    const overrides = { ...flavor.config(url), store: { redisUrl: redis.url, keyPrefix: redis.prefix() }, mcp: { servers: [{ name: 'ops', url: opsUrl, requireApproval: 'writes', allowedTools: ['lookup', 'delete_record'] }] } };
    replicas = await Promise.all([startGateway(url, overrides), startGateway(url, overrides)]);
    [a, b] = replicas.map((gateway) => new OpenAI({ baseURL: gateway.baseURL, apiKey: 'k', maxRetries: 0 })) as [OpenAI, OpenAI];
    scriptModel(upstream, flavor, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_1', name: 'ops__delete_record', args: { id: 'r1' } }] } : { text: `Done: ${results.join(' | ')}` }));
  });
  beforeEach(() => {
    ops.calls.length = 0;
    ops.records.set('r1', 'first record');
  });
  afterAll(async () => {
    await Promise.all(replicas.map((gateway) => gateway.close()));
    await Promise.all([upstream.close(), ops.close()]);
    await redis.cleanup();
    await redis.stop();
  });

  const paused = async () => {
    const response: any = await a.responses.create({ model: flavor.model, input: 'Delete r1.' });
    assertValidResponseWithMcpItems(response);
    expect(response.output.map((item: any) => item.type)).toEqual(['mcp_approval_request']);
    return response;
  };
  const answer = async (on: OpenAI, request: any, approve = true) => {
    const response = await on.responses.create({ model: flavor.model, previous_response_id: request.id, input: [{ type: 'mcp_approval_response', approval_request_id: request.output[0].id, approve }] } as any);
    assertValidResponseWithMcpItems(response);
    return response;
  };
  const refusal = async (pending: Promise<unknown>) => {
    const error: any = await pending.then(() => null, (caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    assertErrorEnvelope({ error: error.error });
    expect(error.error).toMatchObject({ code: 'unknown_approval_request', param: 'input[0].approval_request_id' });
    return error.error.message as string;
  };
  const deletions = () => ops.calls.filter((call) => call.name === 'delete_record').length;

  it('approved on one replica, approved again on the other: the second is a 400 and the call ran once', async () => {
    const request = await paused();
    const approved: any = await answer(b, request);
    expect(approved.status).toBe('completed');
    expect(await refusal(answer(a, request))).toContain(`by response '${approved.id}'`);
    expect(await refusal(answer(b, request))).toContain('already answered');
    expect(deletions()).toBe(1);
  });

  it('two clients approving at once on two replicas: one runs the call, the other is refused', async () => {
    const request = await paused();
    const settled = await Promise.allSettled([answer(a, request), answer(b, request)]);
    expect(settled.filter((result) => result.status === 'fulfilled').map((result) => (result as PromiseFulfilledResult<any>).value.status)).toEqual(['completed']);
    const rejected = settled.find((result) => result.status === 'rejected') as PromiseRejectedResult;
    await refusal(Promise.reject(rejected.reason));
    expect(deletions()).toBe(1);
  });

  it("an approval cut off mid-answer, retried with its Idempotency-Key, gets the response that took the approval, not a refusal, and the call ran once", async () => {
    const request = await paused();
    // The answer after the approved call streams slowly, so the client is gone before it ends.
    upstream.setScript((sent) => {
      const results = flavor.seen(sent).flatMap((seen) => (seen.kind === 'result' ? [seen.content] : []));
      const reply = flavor.render(sent, results.length === 0 ? { calls: [{ id: 'call_1', name: 'ops__delete_record', args: { id: 'r1' } }] } : { textPieces: ['Deleted', ' the', ' record', ' r1', ' for', ' you.'] });
      return reply.kind === 'sse' ? { ...reply, pauseMs: 150 } : reply;
    });
    try {
      const headers = { 'content-type': 'application/json', 'idempotency-key': `approve-${request.id}` };
      const body = JSON.stringify({ model: flavor.model, previous_response_id: request.id, input: [{ type: 'mcp_approval_response', approval_request_id: request.output[0].id, approve: true }], stream: true });
      const abort = new AbortController();
      const first = await fetch(`${replicas[0]!.baseURL}/responses`, { method: 'POST', headers, body, signal: abort.signal });
      const reader = first.body!.getReader();
      let seen = '';
      while (!seen.includes('response.output_text.delta')) seen += new TextDecoder().decode((await reader.read()).value);
      const id = /"id":"(resp_[0-9a-f]+)"/.exec(seen)![1]!;
      abort.abort();
      await waitFor(async () => (await a.responses.retrieve(id).catch(() => null))?.status === 'cancelled', 10_000, 50);

      const retried = await fetch(`${replicas[1]!.baseURL}/responses`, { method: 'POST', headers, body });
      expect(retried.status).toBe(200);
      expect(retried.headers.get('idempotent-replayed')).toBe('true');
      const { events } = parseSseText(await retried.text());
      for (const event of events) assertValidEventWithMcpItems(event);
      const replayed = events.at(-1)!.response;
      expect(replayed).toMatchObject({ id, status: 'cancelled' });
      expect(replayed.output[0]).toMatchObject({ type: 'mcp_call', name: 'delete_record', output: expect.any(String) });
      expect(deletions()).toBe(1);
    } finally {
      scriptModel(upstream, flavor, (_request, results) => (results.length === 0 ? { calls: [{ id: 'call_1', name: 'ops__delete_record', args: { id: 'r1' } }] } : { text: `Done: ${results.join(' | ')}` }));
    }
  });

  it('a denial answers it too: approving after it is refused, and nothing runs', async () => {
    const request = await paused();
    const denied: any = await answer(a, request, false);
    expect(denied.status).toBe('completed');
    await refusal(answer(b, request));
    expect(deletions()).toBe(0);
  });
});
