import type { Redis } from 'ioredis';
import type { StoredResponse } from '../../src/store/response-store.ts';

/**
 * How replicas of earlier loopgate versions read, write and delete stored
 * responses in Redis (their scripts as they shipped), for the tests of a
 * rolling update: replicas of two versions sharing one Redis while the
 * deployment rolls.
 */
export interface EarlierReplica {
  name: string;
  /** An item's entry as that version reads it for `item_reference`. */
  readItem(client: Redis, itemKey: string): Promise<unknown>;
  deleteResponse(client: Redis, keys: { response: string; itemPrefix: string; responsePrefix: string }, id: string): Promise<number>;
}

/** Up to 2026-11-27: each item's entry its JSON alone, a response's item ids comma-joined, every listed entry deleted with it. */
export const itemsCommaJoined: EarlierReplica = {
  name: 'of 2026-11-27 (entries of bare JSON, ids comma-joined)',
  async readItem(client, itemKey) {
    const value = await client.get(itemKey);
    return value === null ? null : JSON.parse(value);
  },
  async deleteResponse(client, keys) {
    const script = `
local ids = redis.call('HGET', KEYS[1], 'items')
if not ids then return 0 end
for itemId in string.gmatch(ids, '[^,]+') do redis.call('DEL', ARGV[1] .. itemId) end
redis.call('DEL', KEYS[1])
return 1
`;
    return (await client.eval(script, 1, keys.response, keys.itemPrefix)) as number;
  },
};

const HOLDER_FIRST_DELETE = `
local fields = redis.call('HMGET', KEYS[1], 'items', 'displaced')
local ids = fields[1]
if not ids then return 0 end
local list = {}
if string.sub(ids, 1, 1) == '[' then list = cjson.decode(ids)
else for itemId in string.gmatch(ids, '[^,]+') do list[#list + 1] = itemId end end
local heirs = fields[2] and cjson.decode(fields[2]) or {}
local owner = ARGV[2] .. '\\n'
for _, itemId in ipairs(list) do
  local key = ARGV[1] .. itemId
  local entry = redis.call('GET', key)
  if entry and (string.sub(entry, 1, 1) == '{' or string.sub(entry, 1, #owner) == owner) then
    local heir = heirs[itemId]
    local kept = heir and redis.call('PTTL', ARGV[3] .. heir) or -2
    if kept > 0 then
      local json = string.sub(entry, 1, 1) == '{' and entry or string.sub(entry, #owner + 1)
      redis.call('SET', key, heir .. '\\n' .. json, 'PX', kept)
    else
      redis.call('DEL', key)
    end
  end
end
redis.call('DEL', KEYS[1])
return 1
`;

const HOLDER_FIRST_PUT = `
local ttl = tonumber(ARGV[1])
local ids = cjson.decode(ARGV[5])
local mine = ARGV[6] .. '\\n'
local before = redis.call('HGET', KEYS[1], 'displaced')
local displaced, any = before and cjson.decode(before) or {}, before ~= false
for i = 2, #KEYS do
  local held = redis.call('GET', KEYS[i])
  local cut = held and string.sub(held, 1, 1) ~= '{' and string.sub(held, 1, #mine) ~= mine and string.find(held, '\\n', 1, true)
  if cut then
    displaced[ids[i - 1]] = string.sub(held, 1, cut - 1)
    any = true
  end
  redis.call('SET', KEYS[i], ARGV[i + 5], 'EX', ttl)
end
redis.call('HSET', KEYS[1], 'data', ARGV[2], 'turn', ARGV[3], 'prev', ARGV[4], 'items', ARGV[5])
if any then redis.call('HSET', KEYS[1], 'displaced', cjson.encode(displaced)) end
redis.call('EXPIRE', KEYS[1], ttl)
return 1
`;

/** 2026-11-28: each entry `<holder>\n<json>`, ids a JSON array; an entry held by another response stays, and one taken over goes back. */
export const holderBeforeJson: EarlierReplica & { put(client: Redis, keys: { response: string; item: (id: string) => string }, record: StoredResponse): Promise<void> } = {
  name: 'of 2026-11-28 (entries naming their holder first, ids a JSON array)',
  async readItem(client, itemKey) {
    const value = await client.get(itemKey);
    if (value === null) return null;
    return JSON.parse(value.startsWith('{') ? value : value.slice(value.indexOf('\n') + 1));
  },
  async deleteResponse(client, keys, id) {
    return (await client.eval(HOLDER_FIRST_DELETE, 1, keys.response, keys.itemPrefix, id, keys.responsePrefix)) as number;
  },
  async put(client, keys, record) {
    const items = [...record.inputItems, ...record.response.output];
    const ids = items.map((item) => item.id);
    const entries = items.map((item) => `${record.response.id}\n${JSON.stringify(item)}`);
    await client.eval(HOLDER_FIRST_PUT, 1 + ids.length, keys.response, ...ids.map(keys.item), 60, JSON.stringify(record), JSON.stringify({ responseId: record.response.id, status: record.response.status, inputItems: record.inputItems, output: record.response.output }), record.previousResponseId ?? '', JSON.stringify(ids), record.response.id, ...entries);
  },
};
