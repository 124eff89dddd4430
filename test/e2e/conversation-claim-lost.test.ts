import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisKeys } from '../../src/store/redis-keys.ts';
import { assertErrorEnvelope, assertValidEvent } from '../support/openresponses-schema.ts';
import { startReplicaPair, type ReplicaPair } from '../support/replica-pair.ts';
import { ScriptedChatUpstream, slowText, textReply } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

/**
 * A replica that stalls past its conversation claim's 15 s lease (a
 * suspended VM, a stopped container) while another replica runs a response
 * in the same conversation: the stalled response must not be answered as if
 * its turn had been added. The lapse is what Redis does when the lease runs
 * out (the lock key goes); the stall itself is left out, so the test takes
 * no 15 s.
 */
describe('a response whose conversation claim lapsed and was taken while it ran (Redis, two replicas)', () => {
  const upstream = new ScriptedChatUpstream(textReply('ok'));
  let replicas: ReplicaPair;
  let admin: Redis;
  let keys: RedisKeys;

  beforeAll(async () => {
    replicas = await startReplicaPair('redis', await upstream.start());
    admin = new Redis(replicas.store.redisUrl as string);
    keys = new RedisKeys(replicas.store.keyPrefix as string);
  });
  afterAll(async () => {
    admin.disconnect();
    await replicas.close();
    await upstream.close();
  });

  async function texts(conversationId: string): Promise<string[]> {
    const page = await replicas.clientOne.conversations.items.list(conversationId, { order: 'asc' });
    return page.data.flatMap((item) => (item.type === 'message' ? [`${item.role}: ${item.content.map((part) => ('text' in part ? part.text : '')).join('')}`] : []));
  }

  /** Starts the first response, lets its claim lapse, and has the other replica run a second response in the conversation meanwhile. */
  async function overtaken<T>(conversationId: string, start: () => Promise<T>): Promise<T> {
    upstream.setScript(slowText('stalled answer', 60));
    const first = start();
    await waitFor(() => upstream.requests.length > 0 && JSON.stringify(upstream.requests.at(-1)!.body).includes('first question'), 5_000);
    expect(await admin.del(keys.conversationLock('default', conversationId))).toBe(1);
    upstream.setScript(textReply('second answer'));
    const second = await replicas.clientOther.responses.create({ model: 'm', conversation: conversationId, input: 'second question' });
    expect(second.status).toBe('completed');
    return first;
  }

  it('a JSON request gets a 409 conversation_claim_lost, not to be retried; the conversation holds only the turn that went on', async () => {
    const conversation = await replicas.clientOne.conversations.create();
    const outcome = await overtaken(conversation.id, () => replicas.clientOne.responses.create({ model: 'm', conversation: conversation.id, input: 'first question' }).catch((error: unknown) => error));
    expect(outcome).toBeInstanceOf(OpenAI.ConflictError);
    expect(outcome).toMatchObject({ status: 409, code: 'conversation_claim_lost', param: 'conversation', type: 'invalid_request_error' });
    expect((outcome as InstanceType<typeof OpenAI.ConflictError>).headers?.get('x-should-retry')).toBe('false');
    assertErrorEnvelope({ error: (outcome as InstanceType<typeof OpenAI.ConflictError>).error });
    expect((outcome as Error).message).toContain(conversation.id);
    expect(await texts(conversation.id)).toEqual(['user: second question', 'assistant: second answer']);
  });

  it('a stream ends with response.failed conversation_claim_lost; the response is not stored as completed', async () => {
    const conversation = await replicas.clientOne.conversations.create();
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    await overtaken(conversation.id, async () => {
      const stream = await replicas.clientOne.responses.create({ model: 'm', conversation: conversation.id, input: 'first question', stream: true });
      for await (const event of stream) {
        assertValidEvent(event);
        events.push(event);
      }
    });
    const terminal = events.at(-1)!;
    expect(terminal.type).toBe('response.failed');
    const failed = (terminal as OpenAI.Responses.ResponseFailedEvent).response;
    expect(failed.error?.code).toBe('conversation_claim_lost');
    expect(events.some((event) => event.type === 'response.completed')).toBe(false);
    // Nobody can read it back as completed (it was never stored as ended), nor find its turn in the conversation.
    const stored = await replicas.clientOther.responses.retrieve(failed.id).catch(() => null);
    expect(stored?.status).not.toBe('completed');
    expect(await texts(conversation.id)).toEqual(['user: second question', 'assistant: second answer']);
  });
});
