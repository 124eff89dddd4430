import { describe, expect, it } from 'vitest';
import { buildConversation } from '../../src/engine/conversation.ts';
import { initialResponse } from '../../src/engine/initial-response.ts';
import { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import { MemoryResponseStore } from '../../src/store/memory-response-store.ts';
import { MAX_CHAIN_DEPTH } from '../../src/store/response-store.ts';

/** A chain of `length` stored responses, each continuing the one before; the newest's id. */
async function storeChain(store: MemoryResponseStore, length: number): Promise<string> {
  const request = CreateResponseRequest.parse({ model: 'm', input: 'x' });
  let previous: string | null = null;
  for (let turn = 0; turn < length; turn++) {
    const response = initialResponse(request, `resp_${turn}`, 'm', 0);
    response.status = 'completed';
    await store.put({ tenant: 't', response, inputItems: [{ type: 'message', id: `msg_${turn}`, role: 'user', content: [{ type: 'input_text', text: `turn ${turn}` }] } as never], previousResponseId: previous });
    previous = response.id;
  }
  return previous!;
}

/**
 * A `previous_response_id` chain deeper than the gateway follows is refused,
 * naming the limit: read as far as the limit, it reached the model without its
 * oldest turns and nothing said so.
 */
describe('previous_response_id chains at the depth limit', () => {
  it(`one of ${MAX_CHAIN_DEPTH} responses is rebuilt whole; one deeper is a 400 naming previous_response_id`, async () => {
    const store = new MemoryResponseStore({ maxEntries: MAX_CHAIN_DEPTH + 10, ttlSeconds: 600 });
    const newest = await storeChain(store, MAX_CHAIN_DEPTH + 1);
    const deepest = CreateResponseRequest.parse({ model: 'm', input: 'next', previous_response_id: newest });
    await expect(buildConversation(store, 't', deepest)).rejects.toMatchObject({ status: 400, code: 'previous_response_chain_too_long', param: 'previous_response_id' });
    // One link younger: exactly the limit, every turn there.
    const atLimit = await buildConversation(store, 't', CreateResponseRequest.parse({ model: 'm', input: 'next', previous_response_id: `resp_${MAX_CHAIN_DEPTH - 1}` }));
    expect(atLimit.turns).toHaveLength(MAX_CHAIN_DEPTH);
    expect(atLimit.turns[0]!.responseId).toBe('resp_0');
  });
});
