import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { Includable } from '../../protocol/includable.ts';
import { checkToolOutputs } from '../../engine/check-tool-outputs.ts';
import { CLIENT_ANSWER_TYPES } from '../../engine/client-call-kinds.ts';
import { idPrefix } from '../../engine/conversation.ts';
import { invalidRequest, notFound } from '../../errors/gateway-error.ts';
import { duplicateItemId } from '../../protocol/duplicate-item-id.ts';
import { checkNewItemIds } from '../../engine/check-new-item-ids.ts';
import type { CompactionCodec } from '../../engine/compaction/compaction-codec.ts';
import { checkCompactionItems } from '../../engine/compaction/expand-compactions.ts';
import { InputItem } from '../../protocol/input-items.ts';
import { parseRequest } from '../../protocol/parse-request.ts';
import type { StoredConversation } from '../../store/conversation-store.ts';
import type { ConversationStore } from '../../store/conversation-store.ts';
import type { StoredInputItem, StoredItem } from '../../store/response-store.ts';
import { newId } from '../../util/ids.ts';
import { inputItemView } from '../input-item-view.ts';
import { gatherInclude } from './include-query.ts';
import { queryInteger } from './query-integer.ts';

/** OpenAI's bounds: items added per request, and metadata. */
const MAX_ITEMS = 20;
const MAX_METADATA_KEYS = 16;
const MAX_METADATA_KEY_CHARS = 64;
const MAX_METADATA_VALUE_CHARS = 512;

const Metadata = z.record(z.string(), z.string()).superRefine((metadata, context) => {
  const keys = Object.keys(metadata);
  if (keys.length > MAX_METADATA_KEYS) {
    context.addIssue({ code: 'custom', message: `too many properties. Expected an object with at most ${MAX_METADATA_KEYS} properties, but got an object with ${keys.length} properties instead`, params: { code: 'object_above_max_size' } });
    return;
  }
  for (const key of keys) {
    if (key.length > MAX_METADATA_KEY_CHARS) {
      context.addIssue({ code: 'custom', message: `key '${key.slice(0, 64)}…' is longer than ${MAX_METADATA_KEY_CHARS} characters`, params: { code: 'string_above_max_length' } });
      return;
    }
    if (metadata[key]!.length > MAX_METADATA_VALUE_CHARS) {
      context.addIssue({ code: 'custom', path: [key], message: `value longer than ${MAX_METADATA_VALUE_CHARS} characters`, params: { code: 'string_above_max_length' } });
      return;
    }
  }
});

const Items = z.array(InputItem).max(MAX_ITEMS);

const CreateBody = z.strictObject({ items: Items.nullish(), metadata: Metadata.nullish() });
const UpdateBody = z.strictObject({ metadata: Metadata.nullable() });
const AddItemsBody = z.strictObject({ items: Items });

/** Accepted and ignored: items are shown whole. */
const Include = z.array(Includable).optional();
const IncludeQuery = z.object({ include: Include });
const ListQuery = IncludeQuery.extend({
  after: z.string().min(1).optional(),
  limit: queryInteger(1, 100).transform((limit) => limit ?? 20),
  order: z.enum(['asc', 'desc']).default('desc'),
});

type Params = { id: string };
type ItemParams = { id: string; item_id: string };

/** Missing and foreign ids answer alike, so ids of other tenants cannot be probed. */
function conversationNotFound(id: string) {
  return notFound(`Conversation with id '${id}' not found.`, 'conversation_not_found');
}

function itemNotFound(itemId: string, param: string | null = null) {
  return notFound(`Item with id '${itemId}' not found.`, 'item_not_found', param);
}

function conversationView(conversation: StoredConversation) {
  return { id: conversation.id, object: 'conversation', created_at: conversation.created_at, metadata: conversation.metadata };
}

/** An item as the Conversations API shows it (the shapes of a response's output). */
function itemView(item: StoredItem): Record<string, unknown> {
  return inputItemView(item as StoredInputItem);
}

function listView(items: StoredItem[], hasMore: boolean) {
  const data = items.map(itemView);
  return { object: 'list', data, first_id: items[0]?.id ?? null, last_id: items.at(-1)?.id ?? null, has_more: hasMore };
}

/**
 * Gives every item its id; references are refused (a conversation holds
 * items, not pointers to responses), and so is an id given twice in one
 * request: ids in a conversation are unique, so the store would keep only
 * the last of the two while the answer listed both.
 */
function toStoredItems(items: readonly InputItem[]): StoredItem[] {
  const duplicate = duplicateItemId(items);
  if (duplicate) throw invalidRequest(`Item id '${duplicate.id}' is given twice, at items[${duplicate.first}] and items[${duplicate.index}]; ids in a conversation are unique.`, `items[${duplicate.index}].id`, 'invalid_value');
  return items.map((item, index) => {
    if (item.type === 'item_reference') throw invalidRequest(`Item references cannot be added to a conversation; send the item itself.`, `items[${index}].type`, 'unsupported_type');
    return { ...item, id: item.id ?? newId(idPrefix(item.type)) } as StoredItem;
  });
}

/** OpenAI's Conversations API: conversations and their items. */
export function registerConversationsRoutes(app: FastifyInstance, store: ConversationStore, compaction: CompactionCodec): void {
  app.post('/v1/conversations', async (request) => {
    // Like OpenAI: an empty body creates an empty conversation.
    const body = parseRequest(CreateBody, request.body ?? {});
    const items = toStoredItems(body.items ?? []);
    checkToolOutputs([], items, 'items');
    checkCompactionItems(body.items ?? [], { codec: compaction, tenant: request.tenant }, 'items');
    const conversation: StoredConversation = { id: newId('conv'), created_at: Math.floor(Date.now() / 1000), metadata: body.metadata ?? {} };
    await store.create(request.tenant, conversation, items);
    return conversationView(conversation);
  });

  app.get<{ Params: Params }>('/v1/conversations/:id', async (request) => {
    const conversation = await store.get(request.tenant, request.params.id);
    if (!conversation) throw conversationNotFound(request.params.id);
    return conversationView(conversation);
  });

  app.post<{ Params: Params }>('/v1/conversations/:id', async (request) => {
    const body = parseRequest(UpdateBody, request.body);
    const conversation = await store.update(request.tenant, request.params.id, body.metadata ?? {});
    if (!conversation) throw conversationNotFound(request.params.id);
    return conversationView(conversation);
  });

  app.delete<{ Params: Params }>('/v1/conversations/:id', async (request) => {
    if (!(await store.delete(request.tenant, request.params.id))) throw conversationNotFound(request.params.id);
    return { id: request.params.id, object: 'conversation.deleted', deleted: true };
  });

  app.get<{ Params: Params }>('/v1/conversations/:id/items', async (request) => {
    const query = parseRequest(ListQuery, gatherInclude(request.query));
    const page = await store.page(request.tenant, request.params.id, { ...(query.after !== undefined && { after: query.after }), limit: query.limit, order: query.order });
    if (page.kind === 'conversation_not_found') throw conversationNotFound(request.params.id);
    if (page.kind === 'after_not_found') throw itemNotFound(query.after!, 'after');
    return listView(page.items, page.hasMore);
  });

  app.post<{ Params: Params }>('/v1/conversations/:id/items', async (request) => {
    parseRequest(IncludeQuery, gatherInclude(request.query));
    const body = parseRequest(AddItemsBody, request.body);
    const items = toStoredItems(body.items);
    checkCompactionItems(body.items, { codec: compaction, tenant: request.tenant }, 'items');
    // Outputs answer calls the conversation holds, and ids given are new to it (read only when either is asked).
    if (items.some((item) => CLIENT_ANSWER_TYPES.has(item.type)) || body.items.some((item) => 'id' in item && item.id != null)) {
      const held = await store.items(request.tenant, request.params.id);
      if (!held) throw conversationNotFound(request.params.id);
      checkNewItemIds(held, body.items, 'items');
      checkToolOutputs(held, items, 'items');
    }
    if (!(await store.append(request.tenant, request.params.id, items))) throw conversationNotFound(request.params.id);
    return listView(items, false);
  });

  app.get<{ Params: ItemParams }>('/v1/conversations/:id/items/:item_id', async (request) => {
    parseRequest(IncludeQuery, gatherInclude(request.query));
    const item = await store.item(request.tenant, request.params.id, request.params.item_id);
    if (item) return itemView(item);
    if (!(await store.get(request.tenant, request.params.id))) throw conversationNotFound(request.params.id);
    throw itemNotFound(request.params.item_id);
  });

  app.delete<{ Params: ItemParams }>('/v1/conversations/:id/items/:item_id', async (request) => {
    const { id, item_id: itemId } = request.params;
    const deleted = await store.deleteItem(request.tenant, id, itemId);
    const conversation = await store.get(request.tenant, id);
    if (!conversation) throw conversationNotFound(id);
    if (!deleted) throw itemNotFound(itemId);
    return conversationView(conversation);
  });
}
