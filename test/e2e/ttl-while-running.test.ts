import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertValidItem, assertValidResponse } from '../support/openresponses-schema.ts';
import { startReplicaPair, type ReplicaPair } from '../support/replica-pair.ts';
import { ScriptedChatUpstream, slowText, textReply } from '../support/scripted-chat-upstream.ts';
import { sleep, waitFor } from '../support/wait-for.ts';

/** About three seconds of answer, against a store TTL of one second. */
const LONG_ANSWER = 'a long answer that takes a while';
const PAUSE_MS = 100;

/**
 * A store TTL shorter than a response's run: what is stored for a response
 * still running (a background response's record, the conversation a
 * response runs in) is kept until it ends, and the TTL counts from there.
 */
for (const storeKind of ['memory', 'redis'] as const) {
  describe(`a store TTL shorter than the response's run, on the ${storeKind} store`, () => {
    const upstream = new ScriptedChatUpstream(textReply('ok'));
    let replicas: ReplicaPair;
    let client: OpenAI;
    let other: OpenAI;

    beforeAll(async () => {
      replicas = await startReplicaPair(storeKind, await upstream.start(), { store: { ttlSeconds: 1 }, loop: { deadlineMs: 30_000 } });
      ({ clientOne: client, clientOther: other } = replicas);
    });
    afterAll(async () => {
      await replicas.close();
      await upstream.close();
    });

    it('a background response past the TTL is still found while it runs, and can be cancelled; one that ends is kept a TTL from its end', async () => {
      upstream.setScript(slowText(LONG_ANSWER, PAUSE_MS));
      const running = await client.responses.create({ model: 'm', input: 'take your time', background: true });
      const toCancel = await client.responses.create({ model: 'm', input: 'take your time too', background: true });
      await sleep(1_800);
      const midway = await other.responses.retrieve(running.id);
      assertValidResponse(midway);
      expect(midway.status).toBe('in_progress');
      const cancelled = await other.responses.cancel(toCancel.id);
      assertValidResponse(cancelled);
      expect(cancelled.status).toBe('cancelled');

      let finished = midway;
      await waitFor(async () => (finished = await client.responses.retrieve(running.id)).status === 'completed', 10_000, 100);
      expect(finished.output_text).toBe(LONG_ANSWER);
      assertValidResponse(finished);
      // The TTL counts from the end: gone a little after it.
      await waitFor(async () => (await fetch(`${replicas.other.baseURL}/responses/${running.id}`)).status === 404, 5_000, 200);
    });

    it('a conversation past the TTL keeps the turn of the response that ran in it, and goes on', async () => {
      upstream.setScript(slowText(LONG_ANSWER, PAUSE_MS));
      const conversation = await client.conversations.create({});
      const running = client.responses.create({ model: 'm', input: 'first question', conversation: conversation.id });
      // Written to meanwhile, through the Conversations API: no shorter life for it than the response's claim gives.
      await sleep(300);
      await other.conversations.items.create(conversation.id, { items: [{ type: 'message', role: 'user', content: 'a note added meanwhile' }] });
      const first = await running;
      assertValidResponse(first);
      expect(first.output_text).toBe(LONG_ANSWER);

      const items = [];
      for await (const item of client.conversations.items.list(conversation.id, { order: 'asc' })) {
        assertValidItem(item);
        items.push(item.type === 'message' ? item.content.map((part) => ('text' in part ? part.text : '')).join('') : item.type);
      }
      expect(items).toEqual(['a note added meanwhile', 'first question', LONG_ANSWER]);
      upstream.setScript(textReply('second answer'));
      const second = await client.responses.create({ model: 'm', input: 'second question', conversation: conversation.id });
      assertValidResponse(second);
      const seen = upstream.requests.at(-1)!.body.messages.map((message: { content: string }) => message.content);
      expect(seen).toEqual(['a note added meanwhile', 'first question', LONG_ANSWER, 'second question']);
    });
  });
}
