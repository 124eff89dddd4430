import type { ConversationClaim, ConversationStore, ItemPage, ItemPageQuery, StoredConversation } from './conversation-store.ts';
import { runCommand, type RedisClient } from './redis-client.ts';
import type { RedisKeys } from './redis-keys.ts';
import type { StoredItem } from './response-store.ts';

export interface RedisConversationStoreOptions {
  client: RedisClient;
  keys: RedisKeys;
  ttlSeconds: number;
  /** Whether `close()` disconnects the client (it does not by default: the client is shared). */
  ownsClient?: boolean;
  /** Longest a command waits for a (re)connecting client before failing; default 1 s. */
  readyWaitMs?: number;
}

/**
 * Lua shared by the scripts. `push` appends one item (an id already in the
 * conversation is replaced and moved to the end, so ids stay unique); `touch`
 * gives every key of the conversation the store's TTL again; `fetch` reads
 * item JSON by id in chunks (Lua's unpack has a stack limit).
 *
 * `whole`: the conversation is there with all its items. A Redis whose
 * `maxmemory-policy` evicts keys takes them one at a time, and a conversation
 * that lost its order or its items would be answered as one with no history,
 * the model told nothing of what came before: one that is not whole is not
 * found. Every script keeps the order and the items alike (one entry each per
 * item), so one without the other is a loss. Both gone would look like a
 * conversation emptied, so the items' hash holds a mark beside them (a field
 * no item id can be: the byte 0xFF alone, which no UTF-8 text holds), and the conversation's
 * hash says it was marked: a mark that is gone went with its hash. Replicas
 * of an earlier version, during a rolling update, append and delete items
 * without touching the mark, so it holds through them.
 */
const LIB = `
local function push(order, items, id, json)
  if redis.call('HSETNX', items, id, json) == 0 then
    redis.call('LREM', order, 0, id)
    redis.call('HSET', items, id, json)
  end
  redis.call('RPUSH', order, id)
end
local function touch(ttl, ...)
  -- The keys expire together, and never sooner than one of them would: a response's claim keeps the conversation past
  -- the TTL while it runs (CLAIM), whatever is written meanwhile, a key made by the write (an order list that was empty) too.
  local keys, keep = {...}, tonumber(ttl)
  for _, key in ipairs(keys) do keep = math.max(keep, redis.call('TTL', key)) end
  for _, key in ipairs(keys) do redis.call('EXPIRE', key, keep) end
end
local MARK = '\\255'
local function whole(conversation, order, items)
  if redis.call('EXISTS', conversation) == 0 then return false end
  local listed, kept = redis.call('LLEN', order), redis.call('HLEN', items)
  if redis.call('HEXISTS', items, MARK) == 1 then return listed == kept - 1 end
  -- No mark: its items' hash went (the conversation says it was marked), or it was written before marks were kept.
  return redis.call('HEXISTS', conversation, 'marked') == 0 and listed == kept
end
local function marked(conversation, items)
  redis.call('HSET', items, MARK, '1')
  redis.call('HSET', conversation, 'marked', '1')
end
local function fetch(items, ids, out)
  for i = 1, #ids, 500 do
    local chunk = {}
    for j = i, math.min(i + 499, #ids) do chunk[#chunk + 1] = ids[j] end
    local values = redis.call('HMGET', items, unpack(chunk))
    for j = 1, #chunk do out[#out + 1] = values[j] end
  end
  return out
end
`;

/**
 * KEYS: conversation, order, items, lock. ARGV: ttl, created_at, metadata JSON, then id and JSON per item.
 * A write Redis refuses at `maxmemory` (HSET) goes first: once a script has written, Redis lets its later
 * writes past the limit, and a DEL is not refused.
 */
const CREATE = `${LIB}
redis.call('HSET', KEYS[1], 'created_at', ARGV[2], 'metadata', ARGV[3])
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
for i = 4, #ARGV, 2 do push(KEYS[2], KEYS[3], ARGV[i], ARGV[i + 1]) end
marked(KEYS[1], KEYS[3])
touch(ARGV[1], KEYS[1], KEYS[2], KEYS[3])
return 1
`;

/** KEYS: conversation, order, items. ARGV: ttl, metadata JSON. Returns created_at, or nil when missing. */
const UPDATE = `${LIB}
if not whole(KEYS[1], KEYS[2], KEYS[3]) then return false end
marked(KEYS[1], KEYS[3])
redis.call('HSET', KEYS[1], 'metadata', ARGV[2])
touch(ARGV[1], KEYS[1], KEYS[2], KEYS[3])
return redis.call('HGET', KEYS[1], 'created_at')
`;

/** KEYS: conversation, order, items, lock. */
const DELETE = `
local existed = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
return existed
`;

/** KEYS: conversation, order, items. ARGV: ttl, then id and JSON per item. */
const APPEND = `${LIB}
if not whole(KEYS[1], KEYS[2], KEYS[3]) then return 0 end
for i = 2, #ARGV, 2 do push(KEYS[2], KEYS[3], ARGV[i], ARGV[i + 1]) end
marked(KEYS[1], KEYS[3])
touch(ARGV[1], KEYS[1], KEYS[2], KEYS[3])
return 1
`;

/** KEYS: conversation, order, items. Returns the items' JSON oldest first, or nil when missing. */
const ITEMS = `${LIB}
if not whole(KEYS[1], KEYS[2], KEYS[3]) then return false end
return fetch(KEYS[3], redis.call('LRANGE', KEYS[2], 0, -1), {})
`;

/**
 * KEYS: conversation, order, items. ARGV: after ('' for none), limit, order.
 * Returns {'page', has_more (0/1), JSON…}, {'conversation_not_found'} or {'after_not_found'}.
 */
const PAGE = `${LIB}
if not whole(KEYS[1], KEYS[2], KEYS[3]) then return {'conversation_not_found'} end
local after, limit, asc = ARGV[1], tonumber(ARGV[2]), ARGV[3] == 'asc'
local n = redis.call('LLEN', KEYS[2])
local position = nil
if after ~= '' then
  position = redis.call('LPOS', KEYS[2], after)
  if not position then return {'after_not_found'} end
end
local ids, more = {}, false
if asc then
  local first = position and position + 1 or 0
  ids = redis.call('LRANGE', KEYS[2], first, first + limit - 1)
  more = first + limit < n
else
  local last = position and position - 1 or n - 1
  if last >= 0 then
    local range = redis.call('LRANGE', KEYS[2], math.max(0, last - limit + 1), last)
    for i = #range, 1, -1 do ids[#ids + 1] = range[i] end
  end
  more = last - limit >= 0
end
return fetch(KEYS[3], ids, {'page', more and 1 or 0})
`;

/** KEYS: conversation, order, items. ARGV: item id. */
const ITEM = `${LIB}
if not whole(KEYS[1], KEYS[2], KEYS[3]) then return false end
return redis.call('HGET', KEYS[3], ARGV[1])
`;

/** KEYS: conversation, order, items. Returns created_at and metadata, or nil when missing. */
const GET = `${LIB}
if not whole(KEYS[1], KEYS[2], KEYS[3]) then return false end
return redis.call('HMGET', KEYS[1], 'created_at', 'metadata')
`;

/** KEYS: conversation, order, items. ARGV: ttl, item id. */
const DELETE_ITEM = `${LIB}
if not whole(KEYS[1], KEYS[2], KEYS[3]) then return 0 end
if redis.call('HDEL', KEYS[3], ARGV[2]) == 0 then return 0 end
redis.call('LREM', KEYS[2], 0, ARGV[2])
marked(KEYS[1], KEYS[3])
touch(ARGV[1], KEYS[1], KEYS[2], KEYS[3])
return 1
`;

/**
 * KEYS: conversation, lock, order, items. ARGV: holder, claim ttl (ms), the conversation's ttl (s), '1' when renewing.
 * Taking or renewing a claim keeps the conversation a TTL from now, and while the claim lasts: it cannot expire under a response that runs in it.
 * The conversation's \`claimed_by\` names the last response to take it: a renewal after a lapse retakes it only if nobody took it meanwhile.
 */
const CLAIM = `${LIB}
if redis.call('EXISTS', KEYS[1]) == 0 then return 'conversation_not_found' end
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then return 'busy' end
if not holder and ARGV[4] == '1' then
  local last = redis.call('HGET', KEYS[1], 'claimed_by')
  if last and last ~= ARGV[1] then return 'busy' end
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
redis.call('HSET', KEYS[1], 'claimed_by', ARGV[1])
touch(math.max(tonumber(ARGV[3]), math.ceil(tonumber(ARGV[2]) / 1000)), KEYS[1], KEYS[3], KEYS[4])
return 'claimed'
`;

/** KEYS: conversation, order, items, lock. ARGV: ttl, holder, then id and JSON per item. */
const APPEND_AND_RELEASE = `${LIB}
local holder = redis.call('GET', KEYS[4])
if holder and holder ~= ARGV[2] then return 0 end
-- Lapsed: its items land only if no other response took the conversation meanwhile (and went on in it).
if not holder then
  local last = redis.call('HGET', KEYS[1], 'claimed_by')
  if last and last ~= ARGV[2] then return 0 end
end
if whole(KEYS[1], KEYS[2], KEYS[3]) then
  for i = 3, #ARGV, 2 do push(KEYS[2], KEYS[3], ARGV[i], ARGV[i + 1]) end
  marked(KEYS[1], KEYS[3])
  touch(ARGV[1], KEYS[1], KEYS[2], KEYS[3])
end
if holder then redis.call('DEL', KEYS[4]) end
return 1
`;

/** KEYS: lock. ARGV: holder. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

type Arg = string | number;

interface ConversationCommands {
  loopgateConvCreate(...keysThenArgs: Arg[]): Promise<number>;
  loopgateConvUpdate(...keysThenArgs: Arg[]): Promise<string | null>;
  loopgateConvDelete(...keys: Arg[]): Promise<number>;
  loopgateConvAppend(...keysThenArgs: Arg[]): Promise<number>;
  loopgateConvItems(...keys: Arg[]): Promise<(string | null)[] | null>;
  loopgateConvPage(...keysThenArgs: Arg[]): Promise<(string | number | null)[]>;
  loopgateConvItem(...keysThenArgs: Arg[]): Promise<string | null>;
  loopgateConvGet(...keys: Arg[]): Promise<[string | null, string | null] | null>;
  loopgateConvDeleteItem(...keysThenArgs: Arg[]): Promise<number>;
  loopgateConvClaim(...keysThenArgs: Arg[]): Promise<ConversationClaim>;
  loopgateConvAppendRelease(...keysThenArgs: Arg[]): Promise<number>;
  loopgateConvRelease(...keysThenArgs: Arg[]): Promise<number>;
}

/**
 * Conversations in Redis (single or cluster). Per conversation: a hash
 * (`created_at`, `metadata`, `marked`), a list of item ids in order, a hash of item JSON
 * by id, and the claim's lock key — all under the tenant's hash tag, so every
 * multi-key step is one script in one slot. Every write gives the
 * conversation's keys the store's TTL again; the lock has its own lease.
 */
export class RedisConversationStore implements ConversationStore {
  readonly redis: RedisClient & ConversationCommands;
  readonly #keys: RedisKeys;
  readonly #ttlSeconds: number;
  readonly #ownsClient: boolean;
  readonly #readyWaitMs: number;

  constructor(options: RedisConversationStoreOptions) {
    this.redis = options.client as RedisClient & ConversationCommands;
    this.#keys = options.keys;
    this.#ttlSeconds = options.ttlSeconds;
    this.#ownsClient = options.ownsClient ?? false;
    this.#readyWaitMs = options.readyWaitMs ?? 1_000;
    const define = (name: keyof ConversationCommands, numberOfKeys: number, lua: string) => this.redis.defineCommand(name, { numberOfKeys, lua });
    define('loopgateConvCreate', 4, CREATE);
    define('loopgateConvUpdate', 3, UPDATE);
    define('loopgateConvDelete', 4, DELETE);
    define('loopgateConvAppend', 3, APPEND);
    define('loopgateConvItems', 3, ITEMS);
    define('loopgateConvPage', 3, PAGE);
    define('loopgateConvItem', 3, ITEM);
    define('loopgateConvGet', 3, GET);
    define('loopgateConvDeleteItem', 3, DELETE_ITEM);
    define('loopgateConvClaim', 4, CLAIM);
    define('loopgateConvAppendRelease', 4, APPEND_AND_RELEASE);
    define('loopgateConvRelease', 1, RELEASE);
  }

  async create(tenant: string, conversation: StoredConversation, items: StoredItem[]): Promise<void> {
    const [c, o, i, l] = this.#all(tenant, conversation.id);
    await this.#run(() => this.redis.loopgateConvCreate(c, o, i, l, this.#ttlSeconds, conversation.created_at, JSON.stringify(conversation.metadata), ...pairs(items)));
  }

  async get(tenant: string, id: string): Promise<StoredConversation | null> {
    const [c, o, i] = this.#all(tenant, id);
    const [createdAt, metadata] = (await this.#run(() => this.redis.loopgateConvGet(c, o, i))) ?? [];
    if (createdAt == null || metadata == null) return null;
    return { id, created_at: Number(createdAt), metadata: JSON.parse(metadata) as Record<string, string> };
  }

  async update(tenant: string, id: string, metadata: Record<string, string>): Promise<StoredConversation | null> {
    const [c, o, i] = this.#all(tenant, id);
    const createdAt = await this.#run(() => this.redis.loopgateConvUpdate(c, o, i, this.#ttlSeconds, JSON.stringify(metadata)));
    return createdAt == null ? null : { id, created_at: Number(createdAt), metadata: { ...metadata } };
  }

  async delete(tenant: string, id: string): Promise<boolean> {
    return (await this.#run(() => this.redis.loopgateConvDelete(...this.#all(tenant, id)))) === 1;
  }

  async append(tenant: string, id: string, items: StoredItem[]): Promise<boolean> {
    const [c, o, i] = this.#all(tenant, id);
    return (await this.#run(() => this.redis.loopgateConvAppend(c, o, i, this.#ttlSeconds, ...pairs(items)))) === 1;
  }

  async items(tenant: string, id: string): Promise<StoredItem[] | null> {
    const [c, o, i] = this.#all(tenant, id);
    const values = await this.#run(() => this.redis.loopgateConvItems(c, o, i));
    return values == null ? null : parseItems(values);
  }

  async page(tenant: string, id: string, query: ItemPageQuery): Promise<ItemPage> {
    const [c, o, i] = this.#all(tenant, id);
    const [kind, more, ...values] = await this.#run(() => this.redis.loopgateConvPage(c, o, i, query.after ?? '', query.limit, query.order));
    if (kind === 'conversation_not_found' || kind === 'after_not_found') return { kind };
    return { kind: 'page', items: parseItems(values as (string | null)[]), hasMore: more === 1 };
  }

  async item(tenant: string, id: string, itemId: string): Promise<StoredItem | null> {
    const [c, o, i] = this.#all(tenant, id);
    const json = await this.#run(() => this.redis.loopgateConvItem(c, o, i, itemId));
    return json == null ? null : (JSON.parse(json) as StoredItem);
  }

  async deleteItem(tenant: string, id: string, itemId: string): Promise<boolean> {
    const [c, o, i] = this.#all(tenant, id);
    return (await this.#run(() => this.redis.loopgateConvDeleteItem(c, o, i, this.#ttlSeconds, itemId))) === 1;
  }

  async claim(tenant: string, id: string, holder: string, ttlMs: number, renewing = false): Promise<ConversationClaim> {
    const [c, o, i, l] = this.#all(tenant, id);
    return this.#run(() => this.redis.loopgateConvClaim(c, l, o, i, holder, Math.max(1, Math.ceil(ttlMs)), this.#ttlSeconds, renewing ? '1' : '0'));
  }

  async appendAndRelease(tenant: string, id: string, holder: string, items: StoredItem[]): Promise<boolean> {
    return (await this.#run(() => this.redis.loopgateConvAppendRelease(...this.#all(tenant, id), this.#ttlSeconds, holder, ...pairs(items)))) === 1;
  }

  async release(tenant: string, id: string, holder: string): Promise<void> {
    await this.#run(() => this.redis.loopgateConvRelease(this.#keys.conversationLock(tenant, id), holder));
  }

  async close(): Promise<void> {
    if (this.#ownsClient) this.redis.disconnect();
  }

  /** The conversation's keys: hash, order, items, lock. */
  #all(tenant: string, id: string): [string, string, string, string] {
    const keys = this.#keys;
    return [keys.conversation(tenant, id), keys.conversationOrder(tenant, id), keys.conversationItems(tenant, id), keys.conversationLock(tenant, id)];
  }

  #run<T>(command: () => Promise<T>): Promise<T> {
    return runCommand(this.redis, this.#readyWaitMs, command);
  }
}

function pairs(items: readonly StoredItem[]): string[] {
  return items.flatMap((item) => [item.id, JSON.stringify(item)]);
}

function parseItems(values: readonly (string | null)[]): StoredItem[] {
  return values.filter((value): value is string => value != null).map((value) => JSON.parse(value) as StoredItem);
}
