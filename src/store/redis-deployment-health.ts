import { runCommand, type RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/**
 * Deployment cool-downs shared by every replica on one Redis: a key with a
 * TTL per cooling deployment, and a counter of failures in a row that
 * expires after the cool-down period. Shaped like providers/routing's
 * `DeploymentHealth`; Redis trouble never stops routing, so every failure
 * here reads as "healthy".
 */
export class RedisDeploymentHealth {
  readonly #client: RedisClient;
  readonly #keys: RedisKeys;
  readonly #readyWaitMs: number;

  constructor(options: { client: RedisClient; keys: RedisKeys; readyWaitMs: number }) {
    this.#client = options.client;
    this.#keys = options.keys;
    this.#readyWaitMs = options.readyWaitMs;
  }

  async coolingDown(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const values = await this.#quietly(() => this.#client.mget(ids.map((id) => this.#keys.deploymentCooldown(id))), [] as (string | null)[]);
    return new Set(ids.filter((_, index) => values[index] != null));
  }

  async recordFailure(id: string, threshold: number, cooldownMs: number): Promise<void> {
    const key = this.#keys.deploymentFailures(id);
    const failures = await this.#quietly(async () => {
      const results = await this.#client.multi().incr(key).pexpire(key, Math.max(cooldownMs, 1)).exec();
      return Number(results?.[0]?.[1] ?? 0);
    }, 0);
    if (failures < threshold) return;
    await this.#quietly(() => this.#client.del(key), 0);
    await this.coolDown(id, cooldownMs);
  }

  async coolDown(id: string, ms: number): Promise<void> {
    if (ms <= 0) return;
    await this.#quietly(() => this.#client.set(this.#keys.deploymentCooldown(id), '1', 'PX', ms), null);
  }

  async recordSuccess(id: string): Promise<void> {
    await this.#quietly(() => this.#client.del(this.#keys.deploymentFailures(id)), 0);
  }

  async #quietly<T>(command: () => Promise<T>, otherwise: T): Promise<T> {
    try {
      return await runCommand(this.#client, this.#readyWaitMs, command);
    } catch {
      return otherwise;
    }
  }
}
