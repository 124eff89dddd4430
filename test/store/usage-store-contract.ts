import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_MODELS_PER_DAY, type UsageRecord, type UsageStore } from '../../src/store/usage-store.ts';

export function usage(tenant: string, model: string, day: string, amounts: Partial<UsageRecord> = {}): UsageRecord {
  return { tenant, model, day, responses: 1, inputTokens: 10, outputTokens: 5, cachedTokens: 2, reasoningTokens: 1, toolCalls: 0, ...amounts };
}

/** The behaviour every UsageStore must have; `create` returns a store no other test writes to. */
export function describeUsageStoreContract(name: string, create: () => Promise<UsageStore>, release: (store: UsageStore) => Promise<void>): void {
  describe(`UsageStore contract: ${name}`, () => {
    const withStore = async (body: (store: UsageStore, tenant: (name: string) => string) => Promise<void>) => {
      const store = await create();
      // Tenant names of this test only (a shared Redis may hold other tests' days).
      const suffix = randomUUID().slice(0, 8);
      try {
        await body(store, (tenantName) => `${tenantName}-${suffix}`);
      } finally {
        await release(store);
      }
    };

    it('adds up what each tenant used per model and day', () =>
      withStore(async (store, tenant) => {
        await store.record(usage(tenant('a'), 'gpt', '2030-01-02', { toolCalls: 2 }));
        await store.record(usage(tenant('a'), 'gpt', '2030-01-02', { inputTokens: 100, outputTokens: 50, cachedTokens: 0, reasoningTokens: 7, toolCalls: 1 }));
        await store.record(usage(tenant('a'), 'claude', '2030-01-02'));
        await store.record(usage(tenant('a'), 'gpt', '2030-01-03'));
        expect(await store.read({ tenant: tenant('a'), start: '2030-01-02', end: '2030-01-02' })).toEqual([
          { tenant: tenant('a'), model: 'claude', day: '2030-01-02', responses: 1, inputTokens: 10, outputTokens: 5, cachedTokens: 2, reasoningTokens: 1, toolCalls: 0 },
          { tenant: tenant('a'), model: 'gpt', day: '2030-01-02', responses: 2, inputTokens: 110, outputTokens: 55, cachedTokens: 2, reasoningTokens: 8, toolCalls: 3 },
        ]);
        expect((await store.read({ tenant: tenant('a'), start: '2030-01-01', end: '2030-01-31' })).map((record) => `${record.day} ${record.model}`)).toEqual(['2030-01-02 claude', '2030-01-02 gpt', '2030-01-03 gpt']);
        expect(await store.read({ tenant: tenant('a'), start: '2030-01-04', end: '2030-02-28' })).toEqual([]);
      }));

    it("reads one tenant's usage alone, or every tenant's", () =>
      withStore(async (store, tenant) => {
        await store.record(usage(tenant('a'), 'gpt', '2030-02-01'));
        await store.record(usage(tenant('b'), 'gpt', '2030-02-01', { inputTokens: 99 }));
        await store.record(usage(tenant('b'), 'gpt', '2030-02-02'));
        expect((await store.read({ tenant: tenant('b'), start: '2030-02-01', end: '2030-02-02' })).map((record) => [record.tenant, record.day, record.inputTokens])).toEqual([
          [tenant('b'), '2030-02-01', 99],
          [tenant('b'), '2030-02-02', 10],
        ]);
        const everyone = (await store.read({ tenant: null, start: '2030-02-01', end: '2030-02-02' })).filter((record) => record.tenant.endsWith(tenant('')));
        expect(everyone.map((record) => [record.day, record.tenant])).toEqual([
          ['2030-02-01', tenant('a')],
          ['2030-02-01', tenant('b')],
          ['2030-02-02', tenant('b')],
        ]);
      }));

    it(`counts models beyond ${MAX_MODELS_PER_DAY} a day as "other"`, () =>
      withStore(async (store, tenant) => {
        for (let index = 0; index < MAX_MODELS_PER_DAY + 5; index++) await store.record(usage(tenant('a'), `model-${String(index).padStart(3, '0')}`, '2030-03-01'));
        await store.record(usage(tenant('a'), 'model-000', '2030-03-01'));
        const records = await store.read({ tenant: tenant('a'), start: '2030-03-01', end: '2030-03-01' });
        expect(records).toHaveLength(MAX_MODELS_PER_DAY + 1);
        expect(records.find((record) => record.model === 'other')).toMatchObject({ responses: 5, inputTokens: 50 });
        expect(records.find((record) => record.model === 'model-000')).toMatchObject({ responses: 2 });
        // A new day starts afresh.
        await store.record(usage(tenant('a'), 'model-999', '2030-03-02'));
        expect(await store.read({ tenant: tenant('a'), start: '2030-03-02', end: '2030-03-02' })).toMatchObject([{ model: 'model-999' }]);
      }));
  });
}
