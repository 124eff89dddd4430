import { monotonicNow } from '../../util/monotonic-clock.ts';
/**
 * Which deployments are cooling down: a deployment that failed
 * `failuresBeforeCooldown` times in a row, or answered 429 with a
 * `retry-after`, is skipped by every replica sharing this state until its
 * cool-down ends. Implementations never throw: health that cannot be read
 * counts as healthy, so an outage of the shared state never stops routing.
 */
export interface DeploymentHealth {
  /** Of `ids`, those cooling down now. */
  coolingDown(ids: readonly string[]): Promise<Set<string>>;
  /** One more failure in a row; cools the deployment down for `cooldownMs` once it reaches `threshold`. */
  recordFailure(id: string, threshold: number, cooldownMs: number): Promise<void>;
  /** Cools the deployment down for `ms` whatever its failure count (an upstream's `retry-after`). */
  coolDown(id: string, ms: number): Promise<void>;
  /** A served call: its failures in a row start again from zero. */
  recordSuccess(id: string): Promise<void>;
}

/** Cool-down state of this process alone. */
export class MemoryDeploymentHealth implements DeploymentHealth {
  readonly #coolUntil = new Map<string, number>();
  readonly #failures = new Map<string, number>();

  async coolingDown(ids: readonly string[]): Promise<Set<string>> {
    const now = monotonicNow();
    return new Set(ids.filter((id) => (this.#coolUntil.get(id) ?? 0) > now));
  }

  async recordFailure(id: string, threshold: number, cooldownMs: number): Promise<void> {
    const failures = (this.#failures.get(id) ?? 0) + 1;
    if (failures < threshold) {
      this.#failures.set(id, failures);
      return;
    }
    this.#failures.delete(id);
    await this.coolDown(id, cooldownMs);
  }

  async coolDown(id: string, ms: number): Promise<void> {
    const until = monotonicNow() + ms;
    if (until > (this.#coolUntil.get(id) ?? 0)) this.#coolUntil.set(id, until);
  }

  async recordSuccess(id: string): Promise<void> {
    this.#failures.delete(id);
  }
}
