import { describe, expect, it } from 'vitest';
import { connectRedis } from '../../src/store/redis-client.ts';
import { RedisBackgroundRegistry } from '../../src/store/redis-background-registry.ts';
import { RedisKeys } from '../../src/store/redis-keys.ts';
import { restrictedRedisUser } from '../support/redis.ts';
import { useTestRedis } from '../support/test-redis-hooks.ts';
import { waitFor } from '../support/wait-for.ts';

const redis = useTestRedis();

describe('RedisBackgroundRegistry', () => {
  it('a Redis user without channel access (Redis 7 gives new users none) still cancels: the cancel is recorded, the refused message only logged', async () => {
    const user = await restrictedRedisUser(redis.url, ['~*', 'resetchannels', '+@all']);
    const client = connectRedis({ url: user.url, commandTimeoutMs: 1_000 });
    const warnings: string[] = [];
    const registry = new RedisBackgroundRegistry({ client, keys: new RedisKeys(redis.prefix()), readyWaitMs: 1_000, log: { warn: (_fields, message) => void warnings.push(message) } });
    try {
      registry.onCancel(() => {});
      await waitFor(() => warnings.some((message) => /subscribe to cancels/.test(message)));
      const ref = { tenant: 't', id: 'resp_running' };
      await registry.register(ref, 5_000);
      await expect(registry.requestCancel(ref)).resolves.toBeUndefined();
      expect(warnings.some((message) => /publish a cancel/.test(message))).toBe(true);
      expect(await registry.renew([ref], 5_000)).toEqual({ lost: [], cancelled: [ref] });
    } finally {
      await registry.close();
      client.disconnect();
      await user.remove();
    }
  });
});
