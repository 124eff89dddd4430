import { createHash } from 'node:crypto';
import type { IdempotencyRecord, IdempotencyStore } from './idempotency-store.ts';
import { runCommand, type RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/** Extends a hold that is still pending (its response not yet named); a finished key keeps its window. */
const RENEW_PENDING = `
local held = redis.call('GET', KEYS[1])
if held and string.find(held, '"responseId":null', 1, true) then return redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return 0
`;

/** Idempotency keys in Redis: one string per key (`{fingerprint, responseId}`), taken with `SET NX`, expiring after the window. */
export class RedisIdempotencyStore implements IdempotencyStore {
  readonly #client: RedisClient;
  readonly #keys: RedisKeys;
  readonly #readyWaitMs: number;

  constructor(options: { client: RedisClient; keys: RedisKeys; readyWaitMs: number }) {
    this.#client = options.client;
    this.#keys = options.keys;
    this.#readyWaitMs = options.readyWaitMs;
  }

  async begin(tenant: string, key: string, fingerprint: string, leaseSeconds: number): Promise<IdempotencyRecord> {
    const redisKey = this.#key(tenant, key);
    const taken = await runCommand(this.#client, this.#readyWaitMs, () => this.#client.set(redisKey, JSON.stringify({ fingerprint, responseId: null }), 'EX', leaseSeconds, 'NX'));
    if (taken === 'OK') return { kind: 'new' };
    const held = await runCommand(this.#client, this.#readyWaitMs, () => this.#client.get(redisKey));
    // Expired between the two commands: take it again.
    if (held === null) return this.begin(tenant, key, fingerprint, leaseSeconds);
    const { fingerprint: heldFingerprint, responseId } = JSON.parse(held) as { fingerprint: string; responseId: string | null };
    return responseId === null ? { kind: 'pending', fingerprint: heldFingerprint } : { kind: 'done', fingerprint: heldFingerprint, responseId };
  }

  async renew(tenant: string, key: string, leaseSeconds: number): Promise<void> {
    await runCommand(this.#client, this.#readyWaitMs, () => this.#client.eval(RENEW_PENDING, 1, this.#key(tenant, key), leaseSeconds));
  }

  async complete(tenant: string, key: string, fingerprint: string, responseId: string, ttlSeconds: number): Promise<void> {
    await runCommand(this.#client, this.#readyWaitMs, () => this.#client.set(this.#key(tenant, key), JSON.stringify({ fingerprint, responseId }), 'EX', ttlSeconds));
  }

  async release(tenant: string, key: string): Promise<void> {
    await runCommand(this.#client, this.#readyWaitMs, () => this.#client.del(this.#key(tenant, key)));
  }

  /** Client keys are hashed: any length and any characters make one short key. */
  #key(tenant: string, key: string): string {
    return this.#keys.idempotency(tenant, createHash('sha256').update(key).digest('hex'));
  }
}
