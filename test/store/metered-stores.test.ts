import { describe, expect, it } from 'vitest';
import { GatewayMetrics } from '../../src/observability/gateway-metrics.ts';
import { LabelBounds } from '../../src/observability/label-bounds.ts';
import { MeteredConversationStore } from '../../src/observability/metered-conversation-store.ts';
import { MeteredResponseStore } from '../../src/observability/metered-response-store.ts';
import { MemoryConversationStore } from '../../src/store/memory-conversation-store.ts';
import { MemoryResponseStore } from '../../src/store/memory-response-store.ts';
import { storeUnavailable, type StoredResponse } from '../../src/store/response-store.ts';
import { parsePrometheusText, sumOf } from '../support/prometheus-text.ts';
import { describeConversationStoreContract } from './conversation-store-contract.ts';
import { describeResponseStoreContract, record } from './response-store-contract.ts';

const newMetrics = () => new GatewayMetrics(new LabelBounds({ models: [], providers: [], tenants: [], mcpServers: [] }));

// The decorators keep every promise of the contracts they wrap.
describeResponseStoreContract('metered memory', async () => new MeteredResponseStore(new MemoryResponseStore({ maxEntries: 1_000, ttlSeconds: 60 }), newMetrics().storeMeter('responses')), (store) => store.close());
let now = 1_000_000;
describeConversationStoreContract(
  'metered memory',
  async () => new MeteredConversationStore(new MemoryConversationStore({ ttlSeconds: 60, maxEntries: 10_000, now: () => now }), newMetrics().storeMeter('conversations')),
  (store) => store.close(),
  async (ms) => {
    now += ms;
  },
);

/** A store whose writes fail as a Redis that went away does. */
class UnavailableForWrites extends MemoryResponseStore {
  override async put(_record: StoredResponse): Promise<void> {
    throw storeUnavailable(new Error('connection refused'));
  }

  override isReady(): boolean {
    return false;
  }

  override async ensureWritable(): Promise<void> {
    throw storeUnavailable(new Error('Redis is reconnecting'));
  }
}

describe('metered stores', () => {
  it('time every operation, count the failed ones, and pass each failure on unchanged', async () => {
    const metrics = newMetrics();
    const store = new MeteredResponseStore(new UnavailableForWrites({ maxEntries: 10, ttlSeconds: 60 }), metrics.storeMeter('responses'));
    await expect(store.put(record('t', 'resp_1', null))).rejects.toMatchObject({ status: 503, code: 'store_unavailable' });
    expect(await store.get('t', 'resp_1')).toBeNull();
    expect(await store.delete('t', 'resp_1')).toBe(false);
    // What the engine asks before a stored response's model call while the store is away: each refusal is a store failure too.
    await expect(store.ensureWritable()).rejects.toMatchObject({ status: 503, code: 'store_unavailable' });
    const conversations = new MeteredConversationStore(new MemoryConversationStore({ ttlSeconds: 60, maxEntries: 10_000 }), metrics.storeMeter('conversations'));
    expect(await conversations.get('t', 'conv_1')).toBeNull();

    const scraped = parsePrometheusText((await metrics.exposition()).body);
    const count = (store: string, operation: string) => sumOf(scraped, 'loopgate_store_operation_duration_seconds_count', { store, operation });
    expect([count('responses', 'put'), count('responses', 'get'), count('responses', 'delete'), count('conversations', 'get')]).toEqual([1, 1, 1, 1]);
    expect(sumOf(scraped, 'loopgate_store_operation_errors_total', { store: 'responses', operation: 'put' })).toBe(1);
    expect(sumOf(scraped, 'loopgate_store_operation_errors_total', { store: 'responses', operation: 'ensureWritable' })).toBe(1);
    expect(sumOf(scraped, 'loopgate_store_operation_errors_total')).toBe(2);
    expect(store.kind).toBe('memory');
    expect(store.isReady()).toBe(false);
  });
});
