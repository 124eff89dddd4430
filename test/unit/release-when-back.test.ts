import { describe, expect, it } from 'vitest';
import { ConversationClaim } from '../../src/engine/conversation-claim.ts';
import { initialResponse } from '../../src/engine/initial-response.ts';
import { MemoryConversationStore } from '../../src/store/memory-conversation-store.ts';
import { retryInBackground } from '../../src/util/retry-in-background.ts';
import { waitFor } from '../support/wait-for.ts';

const away = () => Promise.reject(new Error('store unavailable'));

describe('retryInBackground', () => {
  it('fails with the first attempt, then tries again until the task works, and no more', async () => {
    let attempts = 0;
    const task = () => (++attempts < 3 ? away() : Promise.resolve());
    await expect(retryInBackground(task, 5_000, 20)).rejects.toThrow('store unavailable');
    await waitFor(() => attempts === 3, 2_000, 5);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(attempts).toBe(3);
  });

  it('gives up once its time is out', async () => {
    let attempts = 0;
    await expect(retryInBackground(() => (attempts++, away()), 100, 20)).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(attempts).toBeGreaterThan(1);
    expect(attempts).toBeLessThanOrEqual(6);
  });
});

/** A conversation store that was away when a response let go of its conversation, and is back a moment later. */
class AwayForAMoment extends MemoryConversationStore {
  failures = 0;
  override async release(tenant: string, id: string, holder: string): Promise<void> {
    if (this.failures > 0) {
      this.failures--;
      throw new Error('store unavailable');
    }
    return super.release(tenant, id, holder);
  }
  override async appendAndRelease(tenant: string, id: string, holder: string, items: Parameters<MemoryConversationStore['appendAndRelease']>[3]): Promise<boolean> {
    if (this.failures > 0) {
      this.failures--;
      throw new Error('store unavailable');
    }
    return super.appendAndRelease(tenant, id, holder, items);
  }
}

describe("a conversation's claim let go while the store is away", () => {
  for (const how of ['abandoned', 'failed', 'its items not appended'] as const) {
    it(`is released once the store is back, not only when its 15 s lease lapses (${how})`, async () => {
      const store = new AwayForAMoment({ ttlSeconds: 600, maxEntries: 100 });
      await store.create('t', { id: 'conv_1', created_at: 0, metadata: {} }, []);
      const claim = await ConversationClaim.take(store, 't', 'conv_1', 'response-1');
      store.failures = 2;
      const response = initialResponse({ model: 'm', input: 'x' }, 'resp_1', 'm', 0);
      if (how === 'abandoned') await claim.abandon();
      else {
        response.status = how === 'failed' ? 'failed' : 'completed';
        await expect(claim.finish(response, [])).rejects.toThrow('store unavailable');
      }
      expect(await store.claim('t', 'conv_1', 'response-2', 15_000)).toBe('busy');
      await waitFor(async () => (await store.claim('t', 'conv_1', 'response-2', 15_000)) === 'claimed', 3_000, 50);
      await store.close();
    });
  }
});
