import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { assertValidEvent, assertValidEventWithMcpItems, assertValidResponse } from '../support/openresponses-schema.ts';
import { openaiChat } from '../support/provider-flavors.ts';
import { startReplicaPair, type ReplicaPair, type StoreKind } from '../support/replica-pair.ts';
import { chunk, ScriptedChatUpstream, slowText, textReply, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

/** A streamed answer, one character per chunk, `pauseMs` apart: long enough to walk away from. */
/** The model calls `tool` once, then answers with what it saw. */
function modelCalling(tool: string, args: Record<string, unknown>): (request: RecordedRequest) => UpstreamReply {
  return (request) => {
    const results = (request.body.messages as any[]).filter((message) => message.role === 'tool').map((message) => message.content);
    return openaiChat.render(request, results.length === 0 ? { calls: [{ id: 'call_0', name: tool, args }] } : { text: `saw: ${results.join(' | ')}` });
  };
}

/**
 * Background responses through the official SDK: created on one replica,
 * polled, resumed and cancelled on the other (one process on the memory
 * store, where both roles are the same gateway).
 */
for (const storeKind of ['memory', 'redis', 'redis-cluster'] as const satisfies readonly StoreKind[]) {
  describe(`background responses on the ${storeKind} store`, () => {
    const upstream = new ScriptedChatUpstream(textReply('ok'));
    const mcp = new McpTestServer();
    let replicas: ReplicaPair;
    let clientOne: OpenAI;
    let clientOther: OpenAI;

    beforeAll(async () => {
      const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
      replicas = await startReplicaPair(storeKind, upstreamUrl, { background: { leaseMs: 1_000 }, mcp: { servers: [{ name: 'tools', url: mcpUrl }] } });
      ({ clientOne, clientOther } = replicas);
    });
    afterAll(async () => {
      await replicas.close();
      await Promise.all([upstream.close(), mcp.close()]);
    });
    beforeEach(() => upstream.setScript(textReply('ok')));

    it('answers queued at once, runs detached, and is polled to completed from the other replica', async () => {
      upstream.setScript(slowText('polled answer', 20));
      const queued = await clientOne.responses.create({ model: 'm', input: 'hi', background: true });
      expect(queued.status).toBe('queued');
      expect(queued.background).toBe(true);
      expect(queued.output).toEqual([]);
      let latest = await clientOther.responses.retrieve(queued.id);
      expect(['queued', 'in_progress']).toContain(latest.status);
      await waitFor(async () => (latest = await clientOther.responses.retrieve(queued.id)).status === 'completed', 10_000, 50);
      expect(latest.output_text).toBe('polled answer');
      expect(latest.background).toBe(true);
      assertValidResponse(latest);
    });

    it('a background stream survives its connection: resumed on the other replica with starting_after, the deltas add up to the final text', async () => {
      const text = 'resumable streams keep every event in order';
      upstream.setScript(slowText(text, 15));
      const first = await clientOne.responses.create({ model: 'm', input: 'hi', background: true, stream: true });
      let id = '';
      let lastSequence = -1;
      let seen = '';
      const all: { type: string; sequence_number: number; [field: string]: any }[] = [];
      for await (const event of first) {
        all.push(event);
        lastSequence = event.sequence_number;
        if (event.type === 'response.created') {
          id = event.response.id;
          expect(event.response.status).toBe('queued');
        }
        if (event.type === 'response.output_text.delta') seen += event.delta;
        if (seen.length >= 5) break; // walks away mid-answer
      }
      expect(id).not.toBe('');
      const resumed = await clientOther.responses.retrieve(id, { stream: true, starting_after: lastSequence });
      const sequences: number[] = [];
      let final: OpenAI.Responses.Response | null = null;
      for await (const event of resumed) {
        all.push(event);
        sequences.push(event.sequence_number);
        if (event.type === 'response.output_text.delta') seen += event.delta;
        if (event.type === 'response.completed') final = event.response;
      }
      // What the first connection got and what the resume got make one whole, valid event stream.
      assertEventStreamInvariants(all);
      expect(sequences[0]).toBe(lastSequence + 1);
      expect(sequences).toEqual(sequences.map((_, index) => lastSequence + 1 + index));
      expect(final?.status).toBe('completed');
      expect(seen).toBe(text);
      // Raw stream events carry no output_text convenience: read the message itself.
      expect(final?.output.flatMap((item) => (item.type === 'message' ? item.content : [])).map((part) => (part.type === 'output_text' ? part.text : '')).join('')).toBe(text);

      // The SDK's own resume: responses.stream({response_id}) replays everything and rebuilds the response.
      const replay = clientOther.responses.stream({ response_id: id });
      const rebuilt = await replay.finalResponse();
      expect(rebuilt.output_text).toBe(text);
      // Resumed again after the last event it read (the terminal one): whole and empty at once, not a 5 s wait ending in an error.
      const last = all.at(-1)!.sequence_number;
      const started = performance.now();
      const after: unknown[] = [];
      for await (const event of await clientOther.responses.retrieve(id, { stream: true, starting_after: last })) after.push(event);
      expect(after).toEqual([]);
      expect(performance.now() - started).toBeLessThan(2_000);
      const raw = await fetch(`${replicas.other.baseURL}/responses/${id}?stream=true&starting_after=${last}`);
      expect(raw.status).toBe(200);
      expect(await raw.text()).toBe('data: [DONE]\n\n');
    });

    it("a browser's EventSource resumes: every event carries its sequence number as its SSE id, Last-Event-ID resumes after it, and once the response has ended it is told to stop (204)", async () => {
      upstream.setScript(slowText('event source', 5));
      const queued = await clientOne.responses.create({ model: 'm', input: 'hi', background: true });
      const url = `${replicas.other.baseURL}/responses/${queued.id}?stream=true`;
      /** The frames of a stream as EventSource reads them: each id and event type. */
      const frames = async (headers: Record<string, string>) => {
        const response = await fetch(url, { headers });
        const text = await response.text();
        const framed = text.split('\n\n').filter((frame) => frame.startsWith('id: '));
        for (const frame of framed) assertValidEvent(JSON.parse(/\ndata: (.*)/.exec(frame)![1]!));
        return { status: response.status, frames: framed.map((frame) => ({ id: Number(/^id: (\d+)/.exec(frame)![1]), type: /event: (\S+)/.exec(frame)![1] })) };
      };
      const whole = await frames({});
      expect(whole.status).toBe(200);
      expect(whole.frames.map((frame) => frame.id)).toEqual(whole.frames.map((_, index) => index));
      expect(whole.frames.at(-1)!.type).toBe('response.completed');
      const resumed = await frames({ 'last-event-id': '3' });
      expect(resumed.frames.map((frame) => frame.id)).toEqual(whole.frames.slice(4).map((frame) => frame.id));
      // Past the terminal event: nothing more will come, and a reconnecting EventSource must not replay the stream.
      const done = await fetch(url, { headers: { 'last-event-id': String(whole.frames.at(-1)!.id) } });
      expect(done.status).toBe(204);
      // An EventSource opened with starting_after in its URL sends it on every reconnect, with the later Last-Event-ID beside it:
      // the later of the two is where it resumes, and past the terminal event it is told to stop, not sent the tail again.
      const explicit = await fetch(`${url}&starting_after=1`, { headers: { 'last-event-id': '3' } });
      expect((await explicit.text()).split('\n\n')[0]).toMatch(/^id: 4\n/);
      expect((await fetch(`${url}&starting_after=1`, { headers: { 'last-event-id': String(whole.frames.at(-1)!.id) } })).status).toBe(204);
      // A Last-Event-ID before starting_after (not one this stream sent) leaves starting_after in charge.
      const earlier = await fetch(`${url}&starting_after=3`, { headers: { 'last-event-id': '1' } });
      expect((await earlier.text()).split('\n\n')[0]).toMatch(/^id: 4\n/);
      // `starting_after=` (what the SDKs send for a null) is none: the whole stream, response.created first.
      const empty = await fetch(`${url}&starting_after=`);
      expect((await empty.text()).split('\n\n')[0]).toMatch(/^id: 0\nevent: response.created\n/);
      // Only digits: forms Number() would also read are refused, naming the parameter.
      for (const odd of ['0x2', '1e2', '%202', '1.5']) {
        const refused = await fetch(`${url}&starting_after=${odd}`);
        expect(refused.status).toBe(400);
        expect(((await refused.json()) as any).error).toMatchObject({ param: 'starting_after', message: expect.stringContaining('whole number') });
      }
    });

    it('a resume from before the kept events, or of a response that was not background, is a 400', async () => {
      const plain = await clientOne.responses.create({ model: 'm', input: 'hi' });
      const error = await clientOther.responses.retrieve(plain.id, { stream: true }).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('stream');
    });

    it('continuing a background response still running is a 400 naming previous_response_id (its answer would be left out for good); once finished it continues', async () => {
      upstream.setScript(slowText('slow', 300));
      const running = await clientOne.responses.create({ model: 'm', input: 'hi', background: true });
      const early = await clientOther.responses.create({ model: 'm', previous_response_id: running.id, input: 'and then?' }).then(() => null, (caught: unknown) => caught);
      expect(early).toBeInstanceOf(OpenAI.BadRequestError);
      expect((early as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: 'previous_response_id', code: 'previous_response_in_progress' });
      await waitFor(async () => (await clientOther.responses.retrieve(running.id)).status === 'completed', 10_000);
      upstream.setScript(textReply('later'));
      const later = await clientOther.responses.create({ model: 'm', previous_response_id: running.id, input: 'and then?' });
      assertValidResponse(later);
      expect(later.output_text).toBe('later');
    });

    it('cancel from the other replica stops a running tool (the MCP server sees the abort) and stores cancelled; cancelling again returns the same', async () => {
      upstream.setScript(modelCalling('tools__slow', { ms: 30_000, label: `bg-${storeKind}` }));
      const queued = await clientOne.responses.create({ model: 'm', input: 'run the slow tool', background: true });
      await waitFor(() => mcp.calls.some((call) => (call.args as { label?: string }).label === `bg-${storeKind}`), 10_000);
      const started = Date.now();
      const cancelled = await clientOther.responses.cancel(queued.id);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(cancelled.status).toBe('cancelled');
      await waitFor(() => mcp.cancelledCalls.includes(`bg-${storeKind}`), 5_000);
      const again = await clientOne.responses.cancel(queued.id);
      expect(again.status).toBe('cancelled');
      expect((await clientOther.responses.retrieve(queued.id)).status).toBe('cancelled');
      // The stream of a cancelled response ends with its terminal event.
      const events: { type: string; sequence_number: number; [field: string]: any }[] = [];
      for await (const event of await clientOther.responses.retrieve(queued.id, { stream: true })) events.push(event);
      expect(assertEventStreamInvariants(events, assertValidEventWithMcpItems).status).toBe('cancelled');
      expect(events.at(-1)!.type).toBe('response.incomplete');
    });

    it('delete from the other replica stops a running response: the upstream call ends and the response never comes back', async () => {
      upstream.setScript(slowText('abcdefghijklmnopqrstuvwxyz0123', 100));
      const aborted = upstream.abortedRequests;
      const queued = await clientOne.responses.create({ model: 'm', input: 'hi', background: true });
      await waitFor(async () => (await clientOther.responses.retrieve(queued.id)).status === 'in_progress', 10_000, 20);
      expect(await clientOther.responses.delete(queued.id)).toEqual({ id: queued.id, object: 'response.deleted', deleted: true });
      // The answer had seconds to go: its call was cut short, not run to its end.
      await waitFor(() => upstream.abortedRequests > aborted, 500);
      // After the answer would have ended: nothing stored it again, and it is gone for every reader.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      await expect(clientOne.responses.retrieve(queued.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(clientOne.responses.inputItems.list(queued.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      await expect(clientOther.responses.delete(queued.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      if (storeKind === 'redis') {
        // Its kept events (its answer so far) went with it, not left in Redis until their TTL.
        const redis = new Redis(replicas.store.redisUrl as string);
        try {
          expect(await redis.keys(`${replicas.store.keyPrefix as string}*${queued.id}*`)).toEqual([]);
        } finally {
          redis.disconnect();
        }
      }
    });

    it('cancel of a response that was not background is a 400; of an unknown one a 404', async () => {
      const plain = await clientOne.responses.create({ model: 'm', input: 'hi' });
      await expect(clientOther.responses.cancel(plain.id)).rejects.toBeInstanceOf(OpenAI.BadRequestError);
      await expect(clientOther.responses.cancel('resp_unknown')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    });

    it('background with store=false is a 400 naming background', async () => {
      const error = await clientOne.responses.create({ model: 'm', input: 'hi', background: true, store: false }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('background');
    });

    it('an upstream that refuses ends the background response as failed (it was already queued)', async () => {
      upstream.setScript(() => ({ kind: 'json', status: 500, body: { error: { message: 'boom' } } }));
      const queued = await clientOne.responses.create({ model: 'm', input: 'hi', background: true });
      let latest = queued;
      await waitFor(async () => (latest = await clientOther.responses.retrieve(queued.id)).status === 'failed', 10_000, 50);
      expect(latest.error?.code).toBeTruthy();
    });

    it("a refusal's own error type is kept on the stored response, as a JSON request's error envelope has it", async () => {
      upstream.setScript(() => ({ kind: 'json', status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'Slow down.', type: 'rate_limit_error', code: 'requests_per_minute' } } }));
      const foreground = await clientOne.responses.create({ model: 'm', input: 'hi' }).catch((caught: unknown) => caught);
      expect(foreground).toBeInstanceOf(OpenAI.RateLimitError);
      const queued = await clientOne.responses.create({ model: 'm', input: 'hi', background: true });
      let latest = queued;
      await waitFor(async () => (latest = await clientOther.responses.retrieve(queued.id)).status === 'failed', 10_000, 50);
      assertValidResponse(latest);
      expect(latest.error).toEqual({ code: 'requests_per_minute', message: 'Slow down.', type: (foreground as InstanceType<typeof OpenAI.RateLimitError>).type });
      expect(latest.error).toMatchObject({ type: 'rate_limit_error' });
    });
  });
}
