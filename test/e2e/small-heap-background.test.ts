import { describe, expect, it } from 'vitest';
import { useGatewayProcess } from '../support/gateway-process.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';
import { chunk, ScriptedChatUpstream, sse, textCompletion, usageChunk, type RecordedRequest, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

/** A megabyte of answer, streamed in 20 KB pieces. */
function megabyteAnswer(request: RecordedRequest): UpstreamReply {
  const piece = 'x'.repeat(20_000);
  if (!request.body?.stream) return textCompletion(piece.repeat(50));
  return { kind: 'sse', pieces: sse([chunk({ role: 'assistant', content: '' }), ...Array.from({ length: 50 }, () => chunk({ content: piece })), chunk({}, 'stop'), usageChunk(5, 50_000)]) };
}

/**
 * The memory event log keeps background responses' events as strings on the
 * JS heap; bounded by `store.maxBytes` alone (512 MiB), a gateway whose heap
 * is smaller (a container's) died of it under background responses one
 * after another, losing every stored response.
 */
describe('background responses on the memory store, in a process with a small heap', () => {
  const upstream = new ScriptedChatUpstream(megabyteAnswer);
  const running = useGatewayProcess(upstream, { NODE_OPTIONS: '--max-old-space-size=128' });

  it('keeps serving them one after another (the oldest events go first), and every response stays retrievable', { timeout: 120_000 }, async () => {
    const ids: string[] = [];
    for (let index = 0; index < 60; index++) {
      const queued = await fetch(`${running().baseURL}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', input: `answer ${index}`, background: true }) });
      expect(queued.status).toBe(200);
      const { id } = (await queued.json()) as { id: string };
      ids.push(id);
      await waitFor(async () => ((await (await fetch(`${running().baseURL}/responses/${id}`)).json()) as { status: string }).status === 'completed', 10_000, 20);
    }
    expect(running().child.exitCode).toBeNull();
    expect(running().stderr()).not.toMatch(/heap out of memory/);
    // The newest one's events are all still there to replay.
    const replay = await (await fetch(`${running().baseURL}/responses/${ids.at(-1)}?stream=true&starting_after=0`)).text();
    expect(replay).toContain('event: response.completed');
    // The first ones' events went to make room; the responses themselves did not.
    const oldest = await (await fetch(`${running().baseURL}/responses/${ids[0]}?stream=true&starting_after=0`)).text();
    expect(oldest).toContain('stream_events_expired');
    const first = (await (await fetch(`${running().baseURL}/responses/${ids[0]}`)).json()) as { status: string };
    assertValidResponse(first);
    expect(first.status).toBe('completed');
  });
});
