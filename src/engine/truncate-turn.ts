import { ContextLengthExceeded } from '../errors/context-length-exceeded.ts';
import type { InputItem } from '../protocol/input-items.ts';
import type { TurnRequest } from '../providers/provider.ts';
import type { KnownWindow } from './context-windows.ts';
import { boundTurnTokens, estimateTurnTokens, type TurnMeasure } from './token-estimate.ts';

/** A turn made to fit its model's context window. */
export interface FittedTurn {
  request: TurnRequest;
  /** Items of the conversation left out. */
  dropped: number;
  /** The input sent, estimated in the upstream's tokens; null when it was clearly under the window without counting. */
  estimatedTokens: number | null;
  /** The same in the gateway's own estimate, before the window's scale; null likewise. */
  estimate: number | null;
}

/**
 * `truncation: "auto"`: leaves out the oldest turns of the conversation
 * until the estimated input, with room for the output (`max_output_tokens`,
 * or what the upstream said it reserves), fits `window`. A turn — a user
 * message and what follows it up to the next — goes whole, so a function
 * call always goes with its output (turns joined by a call answered later go
 * together), each turn's oldest steps before the rest of it; then, oldest
 * first, the steps of the newest turn: an agent's session is one user
 * message and hundreds of steps of the loop after it (what the model said
 * and called, and the outputs), and would otherwise never fit once it
 * outgrew the window. Never dropped: the instructions, system and developer
 * messages, the newest user message and the last step after it. When even
 * that leaves the input too long, a 400 `context_length_exceeded`.
 *
 * Costs nothing when the input is clearly under the window (its UTF-8 size
 * is); otherwise the tokenizer is loaded (once) and every item counted.
 */
export async function fitContextWindow(request: TurnRequest, window: KnownWindow): Promise<FittedTurn> {
  const reserve = window.inputOnly ? 0 : Math.max(request.maxOutputTokens ?? 0, window.outputReserve);
  const budget = Math.floor((window.tokens - reserve) / window.scale);
  if (boundTurnTokens(request).total <= budget) return { request, dropped: 0, estimatedTokens: null, estimate: null };
  const measure = await estimateTurnTokens(request);
  const upstreamTokens = (tokens: number) => Math.ceil(tokens * window.scale);
  if (measure.total <= budget) return { request, dropped: 0, estimatedTokens: upstreamTokens(measure.total), estimate: measure.total };
  const cut = truncateTurn(request, measure, budget);
  if (cut.tokens > budget) {
    const room = reserve > 0 ? `${window.tokens} tokens, ${reserve} of them kept for the output` : `${window.tokens} tokens`;
    throw new ContextLengthExceeded(
      `The input is too long for the context window of model '${request.model}' (${room}) even with every earlier turn and step left out: the instructions, tools, the newest user message and the last step after it alone come to about ${upstreamTokens(cut.tokens)} tokens.`,
      { window: window.tokens, inputTokens: upstreamTokens(cut.tokens), outputTokens: reserve || null },
    );
  }
  return { request: cut.request, dropped: cut.dropped, estimatedTokens: upstreamTokens(cut.tokens), estimate: cut.tokens };
}

/** Leaves out the oldest droppable turns of `request` until `measure` says it is within `budget`, or nothing droppable is left. */
export function truncateTurn(request: TurnRequest, measure: TurnMeasure, budget: number): { request: TurnRequest; dropped: number; tokens: number } {
  const { items } = request;
  const units = droppableTurns(items, request.historyLength);
  const dropped = new Set<number>();
  let tokens = measure.total;
  for (const unit of units) {
    if (tokens <= budget) break;
    for (let index = unit.start; index < unit.end; index++) {
      // A turn goes after its steps did: what is gone already is not counted twice.
      if (isInstruction(items[index]!) || dropped.has(index)) continue;
      dropped.add(index);
      tokens -= measure.items[index]!;
    }
  }
  if (dropped.size === 0) return { request, dropped: 0, tokens };
  const droppedHistory = [...dropped].filter((index) => index < request.historyLength).length;
  return {
    request: { ...request, items: items.filter((_, index) => !dropped.has(index)), historyLength: request.historyLength - droppedHistory },
    dropped: dropped.size,
    tokens,
  };
}

/**
 * The conversation's turns that may go, oldest first, as index ranges: each
 * starts at a user message (the first at the first item) and ends before the
 * next turn or the newest turn. A call and its output in different turns join
 * them; a call answered in the newest turn (or an output whose call is there)
 * keeps its turn and every later one.
 */
function droppableTurns(items: readonly InputItem[], historyLength: number): { start: number; end: number }[] {
  let newest = items.findLastIndex((item) => item.type === 'message' && item.role === 'user');
  // Without a user message, the request's own input is the newest turn.
  if (newest < 0) newest = Math.min(historyLength, items.length);
  const starts = new Set<number>([0]);
  for (let index = 1; index < newest; index++) {
    const item = items[index]!;
    if (item.type === 'message' && item.role === 'user') starts.add(index);
  }

  const callsAt = new Map<string, number>();
  const outputsAt = new Map<string, number>();
  items.forEach((item, index) => {
    if (item.type === 'function_call' && !callsAt.has(item.call_id)) callsAt.set(item.call_id, index);
    if (item.type === 'function_call_output' && !outputsAt.has(item.call_id)) outputsAt.set(item.call_id, index);
  });
  const pairs: [first: number, last: number][] = [];
  for (const [callId, call] of callsAt) {
    const output = outputsAt.get(callId);
    if (output !== undefined) pairs.push(call < output ? [call, output] : [output, call]);
  }
  for (const [first, last] of pairs) if (last < newest) for (let index = first + 1; index <= last; index++) starts.delete(index);
  let end = newest;
  for (const [first, last] of pairs) if (first < newest && last >= newest) end = Math.min(end, turnStart(starts, first));

  const ordered = [...starts].filter((start) => start < end).sort((a, b) => a - b);
  const turns = ordered.map((start, index) => ({ start, end: ordered[index + 1] ?? end }));
  // Without a user message there is no newest turn to take steps from: the request's own input is kept whole.
  const newestTurn = newest < items.length && isUserMessage(items[newest]!) ? [{ start: newest, end: items.length }] : [];
  const steps = droppableSteps(items, [...turns, ...newestTurn]);
  // Each earlier turn's oldest steps first, then the rest of it (its question and its answer): a follow-up after a long session keeps the session's end.
  return [...turns.flatMap((turn, index) => [...steps[index]!, turn]), ...(steps[turns.length] ?? [])];
}

/**
 * The steps of each turn (a range starting at its first item) that may go,
 * oldest first: a step begins after the outputs of the step before, once
 * every call made so far is answered. A turn's last step stays (its calls
 * are what the request answers, or its words the model's newest, or the
 * turn's answer), and so does a step holding a call or output whose partner
 * is in another step or outside every step.
 */
function droppableSteps(items: readonly InputItem[], turns: readonly { start: number; end: number }[]): { start: number; end: number }[][] {
  const stepAt = new Int32Array(items.length).fill(-1);
  const steps: { start: number; end: number; id: number }[][] = [];
  let ids = 0;
  for (const turn of turns) {
    const starts: number[] = [];
    const open = new Set<string>();
    // Turns joined by a call answered after the next user message go whole: a step would part a question from its answer.
    if (items.slice(turn.start + 1, turn.end).some(isUserMessage)) {
      steps.push([]);
      continue;
    }
    // A turn's user message is kept with it; the first turn may start with none (a reasoning item, a call): its steps start at once.
    const first = isUserMessage(items[turn.start]!) ? turn.start + 1 : turn.start;
    for (let index = first; index < turn.end; index++) {
      const item = items[index]!;
      if (index === first || (open.size === 0 && isResult(items[index - 1]!) && !isResult(item))) starts.push(index);
      const callId = callIdOf(item);
      if (callId !== null) {
        if (item.type === 'function_call' || item.type === 'custom_tool_call') open.add(callId);
        else open.delete(callId);
      }
    }
    const own = starts.map((start, index) => ({ start, end: starts[index + 1] ?? turn.end, id: -1 }));
    own.pop();
    for (const step of own) {
      step.id = ids++;
      stepAt.fill(step.id, step.start, step.end);
    }
    steps.push(own);
  }
  const placesOf = new Map<string, number[]>();
  items.forEach((item, index) => {
    const callId = callIdOf(item);
    if (callId === null) return;
    const places = placesOf.get(callId);
    if (places) places.push(index);
    else placesOf.set(callId, [index]);
  });
  const split = new Set<number>();
  for (const places of placesOf.values()) {
    const holders = new Set(places.map((place) => stepAt[place]!));
    if (holders.size > 1 || holders.has(-1)) for (const holder of holders) split.add(holder);
  }
  return steps.map((own) => own.filter((step) => !split.has(step.id)));
}

/** What ends a step of the loop: a tool's result (an MCP call carries its own). */
function isResult(item: InputItem): boolean {
  return item.type === 'function_call_output' || item.type === 'custom_tool_call_output' || item.type === 'mcp_call' || item.type === 'tool_search_output' || item.type === 'mcp_approval_response';
}

/** The call id that pairs a call with its output. */
function callIdOf(item: InputItem): string | null {
  return item.type === 'function_call' || item.type === 'function_call_output' || item.type === 'custom_tool_call' || item.type === 'custom_tool_call_output' ? item.call_id : null;
}

function isUserMessage(item: InputItem): boolean {
  return item.type === 'message' && item.role === 'user';
}

/** The start of the turn holding `index`. */
function turnStart(starts: ReadonlySet<number>, index: number): number {
  let start = index;
  while (start > 0 && !starts.has(start)) start--;
  return start;
}

function isInstruction(item: InputItem): boolean {
  return item.type === 'message' && (item.role === 'system' || item.role === 'developer');
}
