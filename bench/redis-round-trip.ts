import { Redis } from 'ioredis';

/**
 * The floor under "storing in Redis adds": one write of a stored response's
 * size from Node to the same Redis, with the client library the gateway
 * uses, at concurrency 1. On a small virtual machine a round trip to another
 * process costs a wake-up each way, and no gateway can store a response in
 * less; what the gateway adds beyond it is its own.
 */
export class RedisRoundTrip {
  readonly #redis: Redis;
  readonly #value: string;
  #key = 0;

  constructor(url: string, valueBytes: number) {
    this.#redis = new Redis(url, { lazyConnect: false });
    this.#value = 'x'.repeat(valueBytes);
  }

  /** Milliseconds of each of `count` writes (SET with an expiry, as the store's script does), one after another. */
  async times(count: number): Promise<number[]> {
    const samples: number[] = [];
    for (let index = 0; index < count; index++) {
      const started = performance.now();
      await this.#redis.set(`loopgate-bench:floor:${this.#key++ % 1_000}`, this.#value, 'EX', 600);
      samples.push(performance.now() - started);
    }
    return samples;
  }

  async close(): Promise<void> {
    await this.#redis.quit();
  }
}
