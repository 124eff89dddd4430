/**
 * The Redis response store's scripts, and the layout of what they write.
 *
 * A response is a hash: `data` (the record), `turn` (what a chain needs of
 * it), `prev` (its link), `item_ids` (its item ids, a JSON array: a client's
 * item id may hold any character), `displaced` (item id → the response an
 * item was taken over from, to be given back) and `items`, its item ids as
 * the versions before `item_ids` read them. Each item is indexed for
 * `item_reference` under its own key, as its JSON alone, and the response
 * holding it under a key beside it (`RedisKeys.itemHolder`).
 *
 * Replicas of earlier versions share the Redis during a rolling update, and
 * what this version writes is written so they read and delete it rightly:
 * they read an item's entry as JSON, and delete a response's items by its
 * `items` field, comma-joined. (The versions of 2026-11-28 that wrote the
 * holder before an entry's JSON, `<holder>\n<json>`, are read here too.)
 */

/**
 * The `items` field as replicas of earlier versions split it: comma-joined
 * (an id holding a comma is cut, and its item left to its TTL, as those
 * versions did with their own; the others are deleted), unless the first id
 * starts with '[': the versions of 2026-11-28 read such a field as a JSON
 * array, and get one.
 */
export function itemsField(ids: readonly string[], idsJson: string): string {
  return ids[0]?.startsWith('[') ? idsJson : ids.join(',');
}

/** The item's JSON in an index entry (entries of 2026-11-28 named their holder first). */
export function indexedItem(entry: string): string {
  return entry.startsWith('{') ? entry : entry.slice(entry.indexOf('\n') + 1);
}

/** Who holds an item's entry: named before its JSON (2026-11-28), else by the holder key beside it; nil for an entry of a version that named no holder. */
const HOLDER_OF = `
local function holderOf(entry, holderKey)
  if string.sub(entry, 1, 1) ~= '{' then
    local cut = string.find(entry, '\\n', 1, true)
    return cut and string.sub(entry, 1, cut - 1) or nil
  end
  return redis.call('GET', holderKey) or nil
end
`;

/**
 * Writes a response, its conversation turn and its items' index entries,
 * all with the TTL, in one command. KEYS: the response hash, one key per
 * item, then one holder key per item. ARGV: ttl, record JSON, turn JSON,
 * previous id, item ids (JSON array), the response's id, the `items` field
 * (`itemsField`), then each item's JSON. An entry another response held is
 * taken over, and that response noted (`displaced`), to be given the entry
 * back should this one be deleted first.
 */
export const PUT_SCRIPT = `${HOLDER_OF}
local ttl = tonumber(ARGV[1])
local ids = cjson.decode(ARGV[5])
local n = #ids
local mine = ARGV[6]
-- Stored again (a background response, queued then finished): what it took over before is still to be given back.
local before = redis.call('HGET', KEYS[1], 'displaced')
local displaced, any = before and cjson.decode(before) or {}, before ~= false
for i = 1, n do
  local held = redis.call('GET', KEYS[1 + i])
  local holder = held and holderOf(held, KEYS[1 + n + i])
  if holder and holder ~= mine then
    displaced[ids[i]] = holder
    any = true
  end
  redis.call('SET', KEYS[1 + i], ARGV[7 + i], 'EX', ttl)
  redis.call('SET', KEYS[1 + n + i], mine, 'EX', ttl)
end
redis.call('HSET', KEYS[1], 'data', ARGV[2], 'turn', ARGV[3], 'prev', ARGV[4], 'item_ids', ARGV[5], 'items', ARGV[7])
if any then redis.call('HSET', KEYS[1], 'displaced', cjson.encode(displaced)) end
redis.call('EXPIRE', KEYS[1], ttl)
return 1
`;

/**
 * Walks a `previous_response_id` chain inside Redis, so rebuilding a
 * conversation of any depth costs one round trip. Returns the turns newest
 * first and the id of the first missing link, if any. KEYS[1]: the first
 * response's key (it routes the script on a cluster); the later links' keys
 * are derived from ARGV[1], the tenant's response key prefix — all in the
 * tenant's hash slot, so on the same node. ARGV: prefix, first id, limit.
 */
export const CHAIN_SCRIPT = `
local prefix, id, limit = ARGV[1], ARGV[2], tonumber(ARGV[3])
local key = KEYS[1]
local turns = {}
for _ = 1, limit do
  local fields = redis.call('HMGET', key, 'turn', 'prev')
  if not fields[1] then return {turns, id} end
  turns[#turns + 1] = fields[1]
  if not fields[2] or fields[2] == '' then return {turns, false} end
  id = fields[2]
  key = prefix .. id
end
return {turns, false}
`;

/**
 * Deletes a response and the item index entries it holds, in one round
 * trip: an entry a later response took over (it resent the same item) is
 * that response's and stays; one this response took over from another still
 * stored goes back to that one, for as long as that one is kept. KEYS[1]:
 * the response. ARGV: the tenant's item key prefix, the response's id, the
 * tenant's response key prefix, its item holder key prefix (same slot).
 * Responses and entries of earlier versions (no `item_ids`, `items` as a
 * JSON array or comma-joined, entries naming no holder) are deleted as they
 * were then.
 */
export const DELETE_SCRIPT = `${HOLDER_OF}
local fields = redis.call('HMGET', KEYS[1], 'item_ids', 'items', 'displaced')
if not fields[1] and not fields[2] then return 0 end
local list = {}
local ids = fields[1] or fields[2]
if string.sub(ids, 1, 1) == '[' then list = cjson.decode(ids)
else for itemId in string.gmatch(ids, '[^,]+') do list[#list + 1] = itemId end end
local heirs = fields[3] and cjson.decode(fields[3]) or {}
local mine = ARGV[2]
for _, itemId in ipairs(list) do
  local key, holderKey = ARGV[1] .. itemId, ARGV[4] .. itemId
  local entry = redis.call('GET', key)
  local holder = entry and holderOf(entry, holderKey)
  if entry and (not holder or holder == mine) then
    local heir = heirs[itemId]
    local kept = heir and redis.call('PTTL', ARGV[3] .. heir) or -2
    if kept > 0 then
      local json = string.sub(entry, 1, 1) == '{' and entry or string.sub(entry, string.find(entry, '\\n', 1, true) + 1)
      redis.call('SET', key, json, 'PX', kept)
      redis.call('SET', holderKey, heir, 'PX', kept)
    else
      redis.call('DEL', key, holderKey)
    end
  end
end
redis.call('DEL', KEYS[1])
return 1
`;
