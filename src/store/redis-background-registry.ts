import type { BackgroundRef, BackgroundRegistry, LeaseRenewal } from './background-registry.ts';
import { duplicateForBlocking, runCommand, type RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';

/*
 * Leases live in one sorted set (member `<tenant>\n<id>`, score: expiry in
 * Redis's own milliseconds, so replicas' clocks never matter) beside a hash
 * of cancel requests; both carry the `{bg}` tag, so every script below
 * touches one slot. KEYS[1]: the set, KEYS[2]: the hash.
 */

const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

const REGISTER_SCRIPT = `${NOW}
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[2])
return 1`;

/** A claimed response's mark in the hash: the reaper that claimed it is ending it. */
const CLAIMED = 'claimed';

/** ARGV: lease ms, then members. Returns {lost members, cancelled members}; a claimed member is lost to its owner. */
const RENEW_SCRIPT = `${NOW}
local expiry = now + tonumber(ARGV[1])
local lost, cancelled = {}, {}
for i = 2, #ARGV do
  local mark = redis.call('HGET', KEYS[2], ARGV[i])
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) and mark ~= '${CLAIMED}' then
    redis.call('ZADD', KEYS[1], 'XX', expiry, ARGV[i])
    if mark then cancelled[#cancelled + 1] = ARGV[i] end
  else
    lost[#lost + 1] = ARGV[i]
  end
end
return {lost, cancelled}`;

/** A cancel only for a response still running, not one being ended by a reaper (anything else is a no-op). Returns 1 when recorded. */
const CANCEL_SCRIPT = `
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('HGET', KEYS[2], ARGV[1]) == '${CLAIMED}' then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], '1')
return 1`;

/**
 * ARGV: limit, grace ms. Marks members whose lease lapsed as claimed and
 * hands each to exactly one caller, who unregisters it once it is ended. The
 * claim itself runs out after the grace: a claimer that died, or whose answer
 * was lost (Redis ran the script after the caller gave up waiting), leaves it
 * for the next claim, so no response is left running forever.
 */
const CLAIM_SCRIPT = `${NOW}
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
for _, member in ipairs(expired) do
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), member)
  redis.call('HSET', KEYS[2], member, '${CLAIMED}')
end
return expired`;

interface RegistryCommands {
  loopgateRegister(running: string, cancels: string, leaseMs: number, member: string): Promise<number>;
  loopgateRenew(running: string, cancels: string, leaseMs: number, ...members: string[]): Promise<[string[], string[]]>;
  loopgateCancel(running: string, cancels: string, member: string): Promise<number>;
  loopgateClaim(running: string, cancels: string, limit: number, graceMs: number): Promise<string[]>;
}

/** Leases and cancels in Redis (single or cluster); cancels also published for the owner to hear at once. */
export class RedisBackgroundRegistry implements BackgroundRegistry {
  readonly #client: RedisClient & RegistryCommands;
  readonly #keys: RedisKeys;
  readonly #listeners: ((ref: BackgroundRef) => void)[] = [];
  readonly #readyWaitMs: number;
  #subscriber: RedisClient | null = null;
  readonly #log: { warn(fields: Record<string, unknown>, message: string): void } | null;

  constructor(options: { client: RedisClient; keys: RedisKeys; readyWaitMs: number; log?: { warn(fields: Record<string, unknown>, message: string): void } }) {
    this.#client = options.client as RedisClient & RegistryCommands;
    this.#log = options.log ?? null;
    this.#readyWaitMs = options.readyWaitMs;
    this.#keys = options.keys;
    this.#client.defineCommand('loopgateRegister', { numberOfKeys: 2, lua: REGISTER_SCRIPT });
    this.#client.defineCommand('loopgateRenew', { numberOfKeys: 2, lua: RENEW_SCRIPT });
    this.#client.defineCommand('loopgateCancel', { numberOfKeys: 2, lua: CANCEL_SCRIPT });
    this.#client.defineCommand('loopgateClaim', { numberOfKeys: 2, lua: CLAIM_SCRIPT });
  }

  async register(ref: BackgroundRef, leaseMs: number): Promise<void> {
    await this.#run(() => this.#client.loopgateRegister(this.#keys.running(), this.#keys.cancels(), leaseMs, memberOf(ref)));
  }

  async renew(owned: readonly BackgroundRef[], leaseMs: number): Promise<LeaseRenewal> {
    if (owned.length === 0) return { cancelled: [], lost: [] };
    const [lost, cancelled] = await this.#run(() => this.#client.loopgateRenew(this.#keys.running(), this.#keys.cancels(), leaseMs, ...owned.map(memberOf)));
    return { lost: lost.map(refOf), cancelled: cancelled.map(refOf) };
  }

  async unregister(ref: BackgroundRef): Promise<void> {
    const member = memberOf(ref);
    await this.#run(() => this.#client.multi().zrem(this.#keys.running(), member).hdel(this.#keys.cancels(), member).exec());
  }

  async requestCancel(ref: BackgroundRef): Promise<void> {
    const recorded = await this.#run(() => this.#client.loopgateCancel(this.#keys.running(), this.#keys.cancels(), memberOf(ref)));
    if (recorded !== 1) return;
    // The message only hastens the cancel, which is recorded: the owner's next lease renewal finds it all the same.
    await this.#run(() => this.#client.publish(this.#keys.cancelChannel(), memberOf(ref))).catch((error: unknown) =>
      this.#log?.warn({ err: error }, 'Could not publish a cancel to the replica running the response (it finds it at its next lease renewal); does the Redis user lack +@pubsub or channel access (&*)?'),
    );
  }

  onCancel(listener: (ref: BackgroundRef) => void): void {
    this.#listeners.push(listener);
    if (this.#subscriber) return;
    const subscriber = duplicateForBlocking(this.#client);
    subscriber.on('error', () => {});
    subscriber.on('message', (_channel: string, member: string) => {
      const ref = refOf(member);
      for (const each of this.#listeners) each(ref);
    });
    // Missed messages (a reconnect) are caught by the next lease renewal.
    void subscriber.subscribe(this.#keys.cancelChannel()).catch((error: unknown) =>
      this.#log?.warn({ err: error }, "Could not subscribe to cancels: a background response cancelled on another replica stops at this one's next lease renewal, not at once; does the Redis user lack +@pubsub or channel access (&*)?"),
    );
    this.#subscriber = subscriber;
  }

  async claimExpired(limit: number, graceMs: number): Promise<BackgroundRef[]> {
    const members = await this.#run(() => this.#client.loopgateClaim(this.#keys.running(), this.#keys.cancels(), limit, graceMs));
    return members.map(refOf);
  }

  async close(): Promise<void> {
    this.#subscriber?.disconnect();
    this.#subscriber = null;
  }

  #run<T>(command: () => Promise<T>): Promise<T> {
    return runCommand(this.#client, this.#readyWaitMs, command);
  }
}

function memberOf(ref: BackgroundRef): string {
  return `${ref.tenant}\n${ref.id}`;
}

function refOf(member: string): BackgroundRef {
  const split = member.indexOf('\n');
  return { tenant: member.slice(0, split), id: member.slice(split + 1) };
}
