import { invalidRequest, notFound } from '../errors/gateway-error.ts';
import { LoadableToolParam, type CreateResponseRequest } from '../protocol/create-response-request.ts';
import type { InputItem } from '../protocol/input-items.ts';
import type { OutputItem } from '../protocol/output-items.ts';
import { REQUEST_LIMITS } from '../protocol/request-limits.ts';
import { MAX_CHAIN_DEPTH, type ConversationTurn, type ResponseStore, type StoredInputItem, type StoredItem } from '../store/response-store.ts';
import { newId } from '../util/ids.ts';
import { checkToolOutputs } from './check-tool-outputs.ts';
import type { ConnectionResponses } from './connection-responses.ts';
import { CLIENT_CALL_TYPES, unansweredUnfinishedCalls } from './client-call-kinds.ts';
import { openTurnOf, pausedTurnOf } from './open-turn.ts';
import { storedItemToInput } from './stored-item-to-input.ts';

export interface Conversation {
  /** What the model saw before this request: each earlier turn's input, then its output, oldest first. */
  history: InputItem[];
  /** This request's input, references resolved, every item with an id (as it will be stored). */
  input: StoredInputItem[];
  /** The response `previous_response_id` names, if any. */
  previous: ConversationTurn | null;
  /** Every output item of the earlier responses, oldest first (listings to reuse, approvals to answer). */
  previousOutput: OutputItem[];
  /** Tools a client-run tool search of this conversation loaded (stored turns and this input). */
  loadedTools: LoadableToolParam[];
  /** The `previous_response_id` chain, oldest first (empty without one): with this response appended, the chain a connection keeps. */
  turns: readonly ConversationTurn[];
}

/**
 * Assembles what the model sees: the conversation's items or the `previous_response_id` chain (one store
 * round trip whatever its depth), then the new input with `item_reference`s
 * resolved (one more). Instructions are never inherited.
 */
export async function buildConversation(
  store: ResponseStore,
  tenant: string,
  request: CreateResponseRequest,
  conversationItems: readonly StoredItem[] | null = null,
  connection: ConnectionResponses | null = null,
): Promise<Conversation> {
  const previousId = request.previous_response_id;
  let chain: readonly ConversationTurn[] = [];
  if (previousId) {
    // The connection's own latest response first: with store=false it is the only place it exists.
    const local = connection?.chain(previousId);
    const { turns, missing } = local ? { turns: local, missing: null } : await store.chain(tenant, previousId);
    chain = turns;
    if (missing !== null) {
      // A link of the chain may never have been stored (store: false, continued on a WebSocket) or may have expired.
      const message = missing === previousId ? `Previous response with id '${previousId}' not found.` : `Previous response with id '${previousId}' continues response '${missing}', which is not stored (it was created with store: false, deleted, or it expired).`;
      throw notFound(message, 'previous_response_not_found', 'previous_response_id');
    }
    // Read one link past the limit: a chain that long would reach the model without its oldest turns, and nothing would say so.
    if (chain.length > MAX_CHAIN_DEPTH) {
      throw invalidRequest(`The previous_response_id chain ending at '${previousId}' is longer than the ${MAX_CHAIN_DEPTH} responses the gateway follows; start a new one from a summary (or keep the conversation in a Conversation, which compaction can shorten).`, 'previous_response_id', 'previous_response_chain_too_long');
    }
    // A background response still running has no answer yet: continuing it now would leave that answer out for good.
    const status = chain.at(-1)?.status;
    if (status === 'queued' || status === 'in_progress') {
      throw invalidRequest(`Previous response with id '${previousId}' is still ${status === 'queued' ? 'queued' : 'in progress'}; continue it once it has finished (poll it, or follow its stream).`, 'previous_response_id', 'previous_response_in_progress');
    }
  }
  const input = await resolveInput(store, tenant, request.input);
  return assembleConversation(conversationItems, chain, input);
}

/**
 * The conversation of a request that names nothing stored (no
 * `previous_response_id`, no `item_reference`: most requests), built at once
 * with no store read to wait for; null for any other, which
 * `buildConversation` builds.
 */
export function conversationAtHand(request: CreateResponseRequest, conversationItems: readonly StoredItem[] | null = null): Conversation | null {
  if (request.previous_response_id || needsStoredItems(request.input)) return null;
  return assembleConversation(conversationItems, [], inputWithIds(request.input, NO_ITEMS));
}

function assembleConversation(conversationItems: readonly StoredItem[] | null, chain: readonly ConversationTurn[], input: StoredInputItem[]): Conversation {
  const history: InputItem[] = [];
  // The items as stored, for matching outputs to calls by kind: the history holds every client call as the function call the model made.
  const stored: { type: string }[] = [];
  const searchOutputs: { item: StoredInputItem; param: string }[] = [];
  let previous: ConversationTurn | null = null;
  const previousOutput: OutputItem[] = [];
  // Calls the model never finished, as stored: left out here; the request's own (a client resending them) in modelInputOf.
  const unfinished = conversationItems || chain.length > 0 ? unansweredUnfinishedCalls([...(conversationItems ?? []), ...chain.flatMap((turn) => turn.output)], [conversationItems ?? [], ...chain.flatMap((turn) => [turn.inputItems, turn.output]), input]) : NOTHING_STORED;
  // A conversation's items come first, as they were added (`conversation` excludes previous_response_id).
  for (const item of conversationItems ?? []) {
    // A compaction's summary stands for everything before it, as in a chain — but for the user messages just before it:
    // the compacted window `/v1/responses/compact` hands back keeps them verbatim, and a client may add that window whole.
    // The calls it stands for are gone with it: an answer to one is answered by nothing the model will see.
    if (item.type === 'compaction') compactAway(history, stored);
    stored.push(item);
    if (unfinished.has(item)) continue;
    history.push(...storedItemToInput(item));
    if (item.type === 'tool_search_output') searchOutputs.push({ item, param: 'conversation' });
    if (item.type.startsWith('mcp_')) previousOutput.push(item as OutputItem);
  }
  if (conversationItems) {
    sayOrphanedOutputs(history);
    // A compaction item the request adds to the conversation cuts what came before it on this turn already, as it will on the next.
    if (input.some((item) => item.type === 'compaction')) compactAway(history, stored, input.slice(0, input.findLastIndex((item) => item.type === 'compaction')));
  }
  for (const turn of chain) {
    // A turn that compacted the conversation (compaction_trigger) answered with a summary that stands for everything before it, its own input included.
    const compacted = turn.output.some((item) => item.type === 'compaction');
    if (compacted) {
      history.length = 0;
      stored.length = 0;
    }
    for (const item of turn.inputItems) {
      stored.push(item);
      if (!compacted) history.push(...storedItemToInput(item));
      if (item.type === 'tool_search_output') searchOutputs.push({ item, param: 'previous_response_id' });
    }
    for (const item of turn.output) if (!unfinished.has(item)) history.push(...storedItemToInput(item));
    stored.push(...turn.output);
    previousOutput.push(...turn.output);
  }
  previous = chain.at(-1) ?? null;
  checkToolOutputs(stored, input);
  if (!previous) {
    // Without previous_response_id, the turn being continued (if any) is the one the client resent,
    previous = openTurnOf(input);
    if (previous) previousOutput.push(...previous.output);
    // else the one the conversation paused on (its MCP items are in previousOutput already).
    else if (conversationItems) previous = pausedTurnOf(conversationItems);
  }
  input.forEach((item, index) => {
    if (item.type === 'tool_search_output') searchOutputs.push({ item, param: `input[${index}]` });
  });
  return { history, input, previous, previousOutput, loadedTools: loadedToolsOf(searchOutputs), turns: chain };
}

/**
 * A conversation's items can be deleted one by one: a tool output whose call
 * was deleted would be refused by every upstream (a result answering no
 * call). It is shown to the model as what it is, in a message, instead.
 */
function sayOrphanedOutputs(history: InputItem[]): void {
  const calls = new Set(history.flatMap((item) => (item.type === 'function_call' ? [item.call_id] : [])));
  history.forEach((item, index) => {
    if (item.type !== 'function_call_output' || calls.has(item.call_id)) return;
    const text = typeof item.output === 'string' ? item.output : item.output.map((part) => (part.type === 'input_text' ? part.text : `[${part.type}]`)).join('\n');
    history[index] = { type: 'message', role: 'user', content: `The output of a tool call no longer in this conversation (${item.call_id}):\n${text}` };
  });
}

/** What the conversation's tool searches loaded, at most `maxTools` of them (each function of a namespace counted), like the request's own tools. */
function loadedToolsOf(searchOutputs: readonly { item: StoredInputItem; param: string }[]): LoadableToolParam[] {
  const loaded: LoadableToolParam[] = [];
  let count = 0;
  for (const { item, param } of searchOutputs) {
    for (const tool of toolsLoadedBy(item, param)) {
      count += tool.type === 'namespace' ? tool.tools.length : 1;
      if (count > REQUEST_LIMITS.maxTools) {
        throw invalidRequest(`Tool searches of this conversation load more than ${REQUEST_LIMITS.maxTools} tools (each function of a namespace counted).`, `${param}.tools`, 'array_above_max_length');
      }
      loaded.push(tool);
    }
  }
  return loaded;
}

async function resolveInput(store: ResponseStore, tenant: string, input: CreateResponseRequest['input']): Promise<StoredInputItem[]> {
  if (!needsStoredItems(input)) return inputWithIds(input, NO_ITEMS);
  const wanted = (input as Exclude<typeof input, string | null | undefined>).flatMap((item) => (item.type === 'item_reference' || isBareMcpCall(item) ? [item.id!] : []));
  return inputWithIds(input, await store.items(tenant, wanted));
}

const NO_ITEMS: ReadonlyMap<string, StoredItem> = new Map();
const NOTHING_STORED: ReadonlySet<object> = new Set();

/** Whether the input names stored items: references, or MCP calls resent without their result. */
function needsStoredItems(input: CreateResponseRequest['input']): boolean {
  return Array.isArray(input) && input.some((item) => item.type === 'item_reference' || isBareMcpCall(item));
}

/**
 * An `mcp_call` resent with neither output nor error: the OpenAI Agents SDK
 * resends the gateway's calls so. The stored call of that id, where there is
 * one, is what the model is shown again (else it would read an empty result).
 */
function isBareMcpCall(item: Exclude<CreateResponseRequest['input'], string | null | undefined>[number]): boolean {
  return item.type === 'mcp_call' && item.id != null && item.output == null && item.error == null;
}

/** The input as it will be stored: every item with an id, references replaced by the items `found` for them. */
function inputWithIds(input: CreateResponseRequest['input'], found: ReadonlyMap<string, StoredItem>): StoredInputItem[] {
  if (input == null) return [];
  if (typeof input === 'string') return [{ id: newId('msg'), type: 'message', role: 'user', content: input }];
  return input.map((item, index) => {
    if (item.type === 'item_reference') {
      const stored = found.get(item.id);
      if (!stored) throw notFound(`Item with id '${item.id}' not found.`, 'item_not_found', `input[${index}].id`);
      // MCP items and client-answered calls stand for themselves (a call to answer, a listing, an approval request); everything else is one item.
      return { ...(stored.type.startsWith('mcp_') || CLIENT_CALL_TYPES.has(stored.type) ? stored : storedItemToInput(stored)[0]), id: item.id } as StoredInputItem;
    }
    if (isBareMcpCall(item)) {
      const stored = found.get(item.id!);
      if (stored?.type === 'mcp_call') return stored as StoredInputItem;
    }
    return { ...item, id: item.id ?? newId(idPrefix(item.type)) } as StoredInputItem;
  });
}

/** The id prefix of an input item the client sent without one. */
export function idPrefix(type: InputItem['type']): 'msg' | 'fc' | 'fco' | 'rs' | 'cmp' | 'ctc' | 'ctco' | 'tsc' | 'tso' | 'mcp' | 'mcpl' | 'mcpr' {
  switch (type) {
    case 'mcp_call':
      return 'mcp';
    case 'mcp_list_tools':
      return 'mcpl';
    case 'mcp_approval_request':
      return 'mcpr';
    case 'custom_tool_call':
      return 'ctc';
    case 'tool_search_call':
      return 'tsc';
    case 'tool_search_output':
      return 'tso';
    case 'custom_tool_call_output':
      return 'ctco';
    case 'function_call':
      return 'fc';
    case 'function_call_output':
      return 'fco';
    case 'reasoning':
      return 'rs';
    case 'compaction':
      return 'cmp';
    default:
      return 'msg';
  }
}

/** The tools a `tool_search_output` loads, each checked as a tool the request itself could have declared. */
function toolsLoadedBy(item: StoredInputItem, param: string): LoadableToolParam[] {
  if (item.type !== 'tool_search_output') return [];
  return item.tools.map((tool, index) => {
    const parsed = LoadableToolParam.safeParse(tool);
    if (!parsed.success) throw invalidRequest(`A tool search loaded a tool this gateway cannot offer (only function, namespace and custom tools): ${parsed.error.issues[0]?.message ?? 'invalid'}.`, `${param}.tools[${index}]`, 'unsupported_tool');
    return parsed.data;
  });
}

/**
 * Leaves of the history what a compaction keeps of the window before it:
 * the user messages just before it (those of the history, when the items
 * added before the compaction, `before`, are all user messages too).
 * Nothing before it stays in `stored`, so no answer can match a call compacted away.
 */
function compactAway(history: InputItem[], stored: { type: string }[], before: readonly { type: string; role?: string }[] = []): void {
  const kept = before.every((item) => item.type === 'message' && item.role === 'user') ? keptUserMessages(history) : 0;
  history.splice(0, history.length - kept);
  stored.length = 0;
}

/** How many user messages end the history: those a compacted window kept before its compaction item. */
function keptUserMessages(history: readonly InputItem[]): number {
  let kept = 0;
  while (kept < history.length) {
    const item = history[history.length - 1 - kept]!;
    if (item.type !== 'message' || item.role !== 'user') break;
    kept++;
  }
  return kept;
}
