import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertValidItem, assertValidResponse } from '../support/openresponses-schema.ts';
import { openaiChat } from '../support/provider-flavors.ts';
import { startReplicaPair, type ReplicaPair } from '../support/replica-pair.ts';
import { ScriptedChatUpstream, slowText, textReply, type RecordedRequest } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

/** The answer, streamed one character per `pauseMs` (or whole after as long, unstreamed). */
/** What the model was shown, as text per message (system prompts left out). */
const shown = (request: RecordedRequest) => openaiChat.seen(request).flatMap((entry) => (entry.kind === 'user' || entry.kind === 'assistant' ? [`${entry.kind}: ${entry.text}`] : []));

async function itemTexts(client: OpenAI, conversationId: string): Promise<string[]> {
  const texts: string[] = [];
  for await (const item of client.conversations.items.list(conversationId, { order: 'asc', limit: 3 })) {
    assertValidItem(item);
    if (item.type !== 'message') continue;
    const text = item.content.map((part) => ('text' in part ? part.text : '')).join('');
    texts.push(`${item.role}: ${text}`);
  }
  return texts;
}

/** `conversation` on POST /v1/responses, over every store, through the official SDK; the second gateway plays another replica. */
for (const storeKind of ['memory', 'redis', 'redis-cluster'] as const) {
  describe(`responses in a conversation on the ${storeKind} store`, () => {
    const upstream = new ScriptedChatUpstream(textReply('ok'));
    let replicas: ReplicaPair;
    let clientOne: OpenAI;
    let clientOther: OpenAI;

    beforeAll(async () => {
      replicas = await startReplicaPair(storeKind, await upstream.start());
      ({ clientOne, clientOther } = replicas);
    });
    afterAll(async () => {
      await replicas.close();
      await upstream.close();
    });
    beforeEach(() => upstream.setScript(textReply('ok')));

    it('the model sees the conversation, then the input; input and output are appended; any replica continues it', async () => {
      const conversation = await clientOne.conversations.create({ items: [{ type: 'message', role: 'user', content: 'I am Ada.' }], metadata: { topic: 'names' } });
      upstream.setScript(textReply('Hello Ada.'));
      const first = await clientOne.responses.create({ model: 'm', conversation: conversation.id, input: 'Greet me.' });
      assertValidResponse(first);
      expect(first.conversation?.id).toBe(conversation.id);
      expect(shown(upstream.requests.at(-1)!)).toEqual(['user: I am Ada.', 'user: Greet me.']);
      upstream.setScript(textReply('You are Ada.'));
      const second = await clientOther.responses.create({ model: 'm', conversation: { id: conversation.id }, input: 'Who am I?', stream: true });
      for await (const _event of second) {
        // drained
      }
      expect(shown(upstream.requests.at(-1)!)).toEqual(['user: I am Ada.', 'user: Greet me.', 'assistant: Hello Ada.', 'user: Who am I?']);
      expect(await itemTexts(clientOther, conversation.id)).toEqual(['user: I am Ada.', 'user: Greet me.', 'assistant: Hello Ada.', 'user: Who am I?', 'assistant: You are Ada.']);
    });

    it('a second response while the first runs is a 409 conversation_locked; nothing interleaves and the conversation is free again after', async () => {
      const conversation = await clientOne.conversations.create();
      upstream.setScript(slowText('first answer', 30));
      const running = clientOne.responses.create({ model: 'm', conversation: conversation.id, input: 'first question' });
      await waitFor(() => upstream.requests.some((request) => shown(request).includes('user: first question')), 5_000);
      const refused = await clientOther.responses.create({ model: 'm', conversation: conversation.id, input: 'second question' }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.ConflictError);
      expect((refused as InstanceType<typeof OpenAI.ConflictError>).code).toBe('conversation_locked');
      // Not for the SDKs to retry on their own: a double submit would run once the first ended, its turn added twice.
      expect((refused as InstanceType<typeof OpenAI.ConflictError>).headers?.get('x-should-retry')).toBe('false');
      expect((await running).status).toBe('completed');
      upstream.setScript(textReply('second answer'));
      await clientOther.responses.create({ model: 'm', conversation: conversation.id, input: 'second question' });
      expect(await itemTexts(clientOne, conversation.id)).toEqual(['user: first question', 'assistant: first answer', 'user: second question', 'assistant: second answer']);
    });

    it("an item the conversation holds, given again with its id (a response's output resent), is a 400 duplicate_item naming it, by either way of adding items; nothing is appended", async () => {
      const conversation = await clientOne.conversations.create();
      const first = await clientOne.responses.create({ model: 'm', conversation: conversation.id, input: 'Capital of France?' });
      const before = await itemTexts(clientOne, conversation.id);
      const resent = first.output as unknown as OpenAI.Responses.ResponseInputItem[];
      const refused = await clientOne.responses.create({ model: 'm', conversation: conversation.id, input: [...resent, { role: 'user', content: 'Second city?' }] }).catch((error: unknown) => error as InstanceType<typeof OpenAI.BadRequestError>);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect(refused).toMatchObject({ code: 'duplicate_item', param: 'input[0].id' });
      const added = await clientOne.conversations.items.create(conversation.id, { items: [{ type: 'message', role: 'user', content: 'new' }, ...resent] as any }).catch((error: unknown) => error);
      expect(added).toMatchObject({ status: 400, code: 'duplicate_item', param: 'items[1].id' });
      expect(await itemTexts(clientOne, conversation.id)).toEqual(before);
      // Free again: the refusal released the conversation.
      expect((await clientOne.responses.create({ model: 'm', conversation: conversation.id, input: 'Second city?' })).status).toBe('completed');
    });

    it('many racing responses on one conversation: each either completes with its items appended whole, or is refused with nothing appended', async () => {
      const conversation = await clientOne.conversations.create();
      upstream.setScript(slowText('answer', 5));
      const outcomes = await Promise.allSettled(
        Array.from({ length: 6 }, (_, index) => (index % 2 === 0 ? clientOne : clientOther).responses.create({ model: 'm', conversation: conversation.id, input: `question ${index}` })),
      );
      const completed = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      expect(completed.length).toBeGreaterThanOrEqual(1);
      for (const outcome of outcomes) if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(OpenAI.ConflictError);
      const texts = await itemTexts(clientOne, conversation.id);
      expect(texts.length).toBe(completed.length * 2);
      for (let index = 0; index < texts.length; index += 2) {
        expect(texts[index]).toMatch(/^user: question \d$/);
        expect(texts[index + 1]).toBe('assistant: answer');
      }
    });

    it('a response that fails appends nothing and releases the conversation', async () => {
      const conversation = await clientOne.conversations.create({ items: [{ type: 'message', role: 'user', content: 'kept' }] });
      upstream.setScript(() => ({ kind: 'json', status: 500, body: { error: { message: 'boom' } } }));
      await expect(clientOne.responses.create({ model: 'm', conversation: conversation.id, input: 'lost' })).rejects.toBeInstanceOf(OpenAI.APIError);
      upstream.setScript(textReply('fine'));
      await clientOne.responses.create({ model: 'm', conversation: conversation.id, input: 'again' });
      expect(await itemTexts(clientOne, conversation.id)).toEqual(['user: kept', 'user: again', 'assistant: fine']);
    });

    it('a background response in a conversation appends its items when it ends', async () => {
      const conversation = await clientOne.conversations.create();
      upstream.setScript(slowText('later', 10));
      const queued = await clientOne.responses.create({ model: 'm', conversation: conversation.id, input: 'take your time', background: true });
      await waitFor(async () => (await clientOther.responses.retrieve(queued.id)).status === 'completed', 10_000, 50);
      expect(await itemTexts(clientOther, conversation.id)).toEqual(['user: take your time', 'assistant: later']);
    });

    it('conversation with previous_response_id is a 400; an unknown conversation a 404', async () => {
      const conversation = await clientOne.conversations.create();
      const previous = await clientOne.responses.create({ model: 'm', input: 'hi' });
      const both = await clientOne.responses.create({ model: 'm', conversation: conversation.id, previous_response_id: previous.id, input: 'x' }).catch((error: unknown) => error);
      expect(both).toBeInstanceOf(OpenAI.BadRequestError);
      expect((both as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('conversation');
      const unknown = await clientOne.responses.create({ model: 'm', conversation: 'conv_missing', input: 'x' }).catch((error: unknown) => error);
      expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
      expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('conversation_not_found');
    });
  });
}
