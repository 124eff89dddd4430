/**
 * Every Redis key loopgate writes, in one place, with the hash tags that make
 * it work on a Redis Cluster:
 * - `{t:<tenant>}` — a tenant's responses, items and conversations share one
 *   slot, so a `previous_response_id` chain is walked, and a response with its
 *   items (or a conversation with its new items) written, by one script. The
 *   price: one tenant's stored state lives on one cluster shard (tenants spread
 *   across shards; one very large tenant does not).
 * - `{e:<tenant>:<id>}` — a background response's event stream, alone in its
 *   slot: the bulk of the bytes and commands spreads across shards.
 * - `{bg}` — the registry of running background responses and their cancel
 *   requests: small, read by every replica's lease keeper in one command.
 * - `{k:<key id>}` — one API key's rate-limit buckets and concurrency slots,
 *   taken together by one script; keys spread across shards.
 * - `{u:<day>}` — one UTC day's usage of every tenant with the list of those
 *   tenants, written by one script per response; days spread across shards.
 * - `{rt}` — routing's deployment cool-downs: few and small, read together
 *   with one MGET.
 */
export class RedisKeys {
  readonly #prefix: string;

  constructor(prefix: string) {
    this.#prefix = prefix;
  }

  tenant(tenant: string): string {
    return `${this.#prefix}{t:${tenant}}:`;
  }

  response(tenant: string, id: string): string {
    return `${this.tenant(tenant)}r:${id}`;
  }

  /** Keys of a tenant's responses start with this (the chain script derives them). */
  responsePrefix(tenant: string): string {
    return `${this.tenant(tenant)}r:`;
  }

  itemPrefix(tenant: string): string {
    return `${this.tenant(tenant)}i:`;
  }

  item(tenant: string, id: string): string {
    return this.itemPrefix(tenant) + id;
  }

  /** Keys naming the response that holds each item's entry start with this (the delete script derives them). */
  itemHolderPrefix(tenant: string): string {
    return `${this.tenant(tenant)}ih:`;
  }

  /** The response holding the item's entry (`item`), kept beside it: the entry itself stays plain JSON for replicas of earlier versions. */
  itemHolder(tenant: string, id: string): string {
    return this.itemHolderPrefix(tenant) + id;
  }

  /** A conversation's hash (`created_at`, `metadata`). */
  conversation(tenant: string, id: string): string {
    return `${this.tenant(tenant)}c:${id}`;
  }

  /** A conversation's item ids, in order (a list). */
  conversationOrder(tenant: string, id: string): string {
    return `${this.tenant(tenant)}co:${id}`;
  }

  /** A conversation's items by id (a hash of JSON). */
  conversationItems(tenant: string, id: string): string {
    return `${this.tenant(tenant)}cd:${id}`;
  }

  /** Held by the response appending to a conversation (one at a time). */
  conversationLock(tenant: string, id: string): string {
    return `${this.tenant(tenant)}cl:${id}`;
  }

  /** What an `Idempotency-Key` (hashed) of the tenant's stands for. */
  idempotency(tenant: string, keyHash: string): string {
    return `${this.tenant(tenant)}idem:${keyHash}`;
  }

  /** A background response's events (a stream). */
  events(tenant: string, id: string): string {
    return `${this.#prefix}{e:${tenant}:${id}}:events`;
  }

  /** Running background responses: member `<tenant>\n<id>`, score the owner's lease expiry (ms). */
  running(): string {
    return `${this.#prefix}{bg}:running`;
  }

  /** Cancel requests for running background responses: field `<tenant>\n<id>`. */
  cancels(): string {
    return `${this.#prefix}{bg}:cancel`;
  }

  /** What the store's readiness probe writes and deletes at once: a key shaped as a tenant's (a hash tag of its own), so no other application's. */
  probe(): string {
    return `${this.#prefix}{loopgate-probe}:probe`;
  }

  /** Pub/sub channel on which a cancel reaches the owning replica at once. */
  cancelChannel(): string {
    return `${this.#prefix}cancel`;
  }

  /** An API key's token buckets (a hash); `keyId` is a digest, never the key. */
  rateLimitBuckets(keyId: string): string {
    return `${this.#prefix}{k:${keyId}}:rl`;
  }

  /** An API key's concurrency slots (a sorted set scored by lease expiry). */
  rateLimitSlots(keyId: string): string {
    return `${this.#prefix}{k:${keyId}}:slots`;
  }

  /** A tenant's usage on one UTC day (a hash of counters per model). */
  usage(day: string, tenant: string): string {
    return `${this.usagePrefix(day)}${tenant}`;
  }

  /** Keys of one day's usage start with this (the read script derives each tenant's key). */
  usagePrefix(day: string): string {
    return `${this.#prefix}{u:${day}}:t:`;
  }

  /** The tenants with usage on one UTC day (a set). */
  usageTenants(day: string): string {
    return `${this.#prefix}{u:${day}}:tenants`;
  }

  /** Present (with a TTL) while a model deployment cools down. */
  deploymentCooldown(deployment: string): string {
    return `${this.#prefix}{rt}:cool:${deployment}`;
  }

  /** A deployment's failures in a row, expiring after the cool-down period. */
  deploymentFailures(deployment: string): string {
    return `${this.#prefix}{rt}:fail:${deployment}`;
  }
}
