import type { InputItem } from '../protocol/input-items.ts';
import { parseJsonWithinDepth } from '../protocol/json-depth.ts';
import type { CustomToolCallOutputItem, ItemStatus, OutputItem, ToolSearchCallOutputItem } from '../protocol/output-items.ts';
import { REQUEST_LIMITS } from '../protocol/request-limits.ts';
import { newId } from '../util/ids.ts';
import { modelToolName, TOOL_SEARCH_NAME, type ClientToolName } from './declared-tools.ts';
import { freeformInput } from '../protocol/freeform-call.ts';

type Item = InputItem | OutputItem;

/** A call as the model made it: the flat name it was offered, its arguments as JSON text. */
export interface ModelCall {
  callId: string;
  name: string;
  arguments: string;
}

/** An answer as the model sees it: the output of the call with that id. */
export interface ModelOutput {
  callId: string;
  output: Extract<InputItem, { type: 'function_call_output' }>['output'];
}

/**
 * One kind of call the client answers, in one place: which item types carry
 * the call and its answer, and how both read back as the function call and
 * output the model made and saw. (How each kind is offered to the model:
 * declared-tools.ts; server-run kinds such as MCP: call-items.ts.)
 */
interface ClientCallKind<Call extends Item['type'], Answer extends Item['type']> {
  call: Call;
  answer: Answer;
  modelCall(item: Extract<Item, { type: Call }>): ModelCall;
  modelOutput(item: Extract<Item, { type: Answer }>): ModelOutput;
}

/** A call's own name and namespace as the model's flat name. */
const flatName = (item: { name: string; namespace?: string | null }) => modelToolName({ name: item.name, ...(item.namespace && { namespace: item.namespace }) });

/** Functions (namespaced ones under their flat name): `function_call` + `function_call_output`. */
const FUNCTION: ClientCallKind<'function_call', 'function_call_output'> = {
  call: 'function_call',
  answer: 'function_call_output',
  modelCall: (item) => ({ callId: item.call_id, name: flatName(item), arguments: item.arguments }),
  modelOutput: (item) => ({ callId: item.call_id, output: item.output as ModelOutput['output'] }),
};

/** Freeform tools: a function with one string parameter, `input`, for the model. */
const CUSTOM: ClientCallKind<'custom_tool_call', 'custom_tool_call_output'> = {
  call: 'custom_tool_call',
  answer: 'custom_tool_call_output',
  modelCall: (item) => ({ callId: item.call_id, name: flatName(item), arguments: JSON.stringify({ input: item.input }) }),
  modelOutput: (item) => ({ callId: item.call_id, output: item.output as ModelOutput['output'] }),
};

/** A client-run tool search: a function for the model; its answer names the tools it loaded. */
const TOOL_SEARCH: ClientCallKind<'tool_search_call', 'tool_search_output'> = {
  call: 'tool_search_call',
  answer: 'tool_search_output',
  modelCall: (item) => ({ callId: item.call_id ?? item.id ?? TOOL_SEARCH_NAME, name: TOOL_SEARCH_NAME, arguments: JSON.stringify(item.arguments ?? {}) }),
  modelOutput: (item) => ({ callId: item.call_id ?? TOOL_SEARCH_NAME, output: JSON.stringify({ loaded: item.tools.map((tool) => (tool as { name?: string }).name ?? tool.type) }) }),
};

const KINDS = [FUNCTION, CUSTOM, TOOL_SEARCH] as const;

/** Each call item type with the item type that answers it. */
export const CLIENT_CALL_ANSWERS: readonly { call: Item['type']; answer: Item['type'] }[] = KINDS.map(({ call, answer }) => ({ call, answer }));
/** Item types that carry a call the client answers. */
export const CLIENT_CALL_TYPES: ReadonlySet<string> = new Set(KINDS.map((kind) => kind.call));
/** Item types that carry the client's answer to a call. */
export const CLIENT_ANSWER_TYPES: ReadonlySet<string> = new Set(KINDS.map((kind) => kind.answer));

/** The call an item carries, as the model made it; null for items that carry no client-answered call. */
export function modelCallOf(item: Item): ModelCall | null {
  const kind = KINDS.find((candidate) => candidate.call === item.type);
  return kind ? (kind.modelCall as (item: Item) => ModelCall)(item) : null;
}

/** The answer an item carries, as the model sees it; null for items that carry none. */
export function modelOutputOf(item: Item): ModelOutput | null {
  const kind = KINDS.find((candidate) => candidate.answer === item.type);
  return kind ? (kind.modelOutput as (item: Item) => ModelOutput)(item) : null;
}

/**
 * A call the model never finished: its turn broke off or stopped at the
 * token limit, leaving it `incomplete`. It was never run and its arguments
 * may be cut mid-way: clients are never told it is done, and the model's
 * history leaves it out unless the client answered it.
 */
export function isUnfinishedCall(item: { type: string }): boolean {
  return CLIENT_CALL_TYPES.has(item.type) && (item as { status?: string | null }).status === 'incomplete';
}

const NONE: ReadonlySet<Item> = new Set();

/**
 * The unfinished calls among `made` that no item of `answerLists` answers:
 * left out of what the model sees, which starts afresh. No upstream takes a
 * call without its result. (A client that answers one keeps it.)
 */
export function unansweredUnfinishedCalls(made: readonly Item[], answerLists: readonly (readonly Item[])[]): ReadonlySet<Item> {
  // Most requests hold none: nothing made, nothing read.
  if (!made.some(isUnfinishedCall)) return NONE;
  const unfinished = made.filter(isUnfinishedCall);
  const answered = new Set(answerLists.flatMap((list) => list.flatMap((item) => modelOutputOf(item)?.callId ?? [])));
  return new Set(unfinished.filter((item) => !answered.has(modelCallOf(item)!.callId)));
}

/**
 * The item the client gets for a finished call of a tool that is not a
 * function for it — a freeform tool's `custom_tool_call` (its text from the
 * `input` argument) or a `tool_search_call` — added whole once the model's
 * arguments are complete (OpenAI's `response.custom_tool_call_input.*`
 * events are not in the OpenResponses schema, so none are streamed).
 */
export function clientCallItem(shown: ClientToolName & { kind: 'custom' | 'tool_search' }, call: ModelCall, status: ItemStatus): CustomToolCallOutputItem | ToolSearchCallOutputItem {
  if (shown.kind === 'custom') {
    return { type: 'custom_tool_call', id: newId('ctc'), call_id: call.callId, name: shown.name, ...(shown.namespace && { namespace: shown.namespace }), input: freeformInput(call.arguments), status };
  }
  return { type: 'tool_search_call', id: newId('tsc'), call_id: call.callId, arguments: parseArguments(call.arguments), execution: 'client', status };
}

/** A call's arguments as the object they encode (the raw text when they are not JSON). */
function parseArguments(text: string): unknown {
  try {
    // Deeper than a request may nest, the object would overflow whatever serialises the item: kept as text.
    return parseJsonWithinDepth(text || '{}', REQUEST_LIMITS.maxJsonDepth);
  } catch {
    return text;
  }
}
