import { afterAll, beforeAll } from 'vitest';
import { acquireRedis, type TestRedis } from './redis.ts';

/**
 * The file's real Redis (support/redis.ts), acquired before its tests and
 * cleaned up and stopped after them: called at the top of a test file, in
 * place of the same two hooks in each. Its fields read the Redis acquired.
 */
export function useTestRedis(): TestRedis {
  let acquired: TestRedis | null = null;
  beforeAll(async () => {
    acquired = await acquireRedis();
  });
  afterAll(async () => {
    await acquired?.cleanup();
    await acquired?.stop();
  });
  const current = (): TestRedis => {
    if (!acquired) throw new Error('the test Redis is not acquired yet (use it inside tests and hooks)');
    return acquired;
  };
  return {
    get url() {
      return current().url;
    },
    prefix: () => current().prefix(),
    cleanup: () => current().cleanup(),
    stop: () => current().stop(),
  };
}
