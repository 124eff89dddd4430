import { freeformArguments } from '../protocol/freeform-call.ts';
import { newId } from '../util/ids.ts';
import type { TurnEvent } from './provider.ts';

/** One streamed fragment of a tool call, as upstreams of every quality send it. */
export interface ToolCallFragment {
  /** Slot the upstream assigned, if it did; otherwise the fragment's position in its chunk. */
  slot: number;
  id: string | null;
  name: string | null;
  arguments: string | null;
  /** The fragment's text is a freeform call's raw input (OpenAI's `custom` tool calls), not JSON arguments. */
  freeform?: boolean;
  /** A signature the upstream put on the call, to go back with it (Gemini's thought signatures). */
  signature?: string | null;
}

/** Shared and never written to: what a turn without signed calls has. */
const NONE_SIGNED: readonly SignedCall[] = [];

/** A call the upstream signed, whole. */
export interface SignedCall {
  callId: string;
  name: string;
  arguments: string;
  signature: string;
}

interface TrackedCall {
  callId: string;
  upstreamId: string | null;
  name: string | null;
  /** Arguments that arrived before the name, held until the call can be announced. */
  buffered: string;
  /** Every argument fragment so far: a name arriving after a complete argument object starts another call. */
  arguments: string;
  /** A freeform call's raw input so far: given as its one argument, `input`, once the call is whole (freeform-call.ts). */
  freeformInput: string | null;
  signature: string | null;
}

/**
 * Accumulates tool-call fragments into calls and emits provider-neutral events.
 * It tolerates what imperfect servers do: a missing `index` (the position is the
 * slot), every call at index 0 with different ids (a new id opens a new call), a
 * missing first id (one is made up), names after arguments, a whole call in
 * one fragment, and whole calls one per chunk with neither index nor id (a
 * name after a complete argument object opens a new call; a server that
 * repeats the name on every fragment of one call is still one call).
 */
export class ToolCallTracker {
  readonly #bySlot = new Map<number, TrackedCall>();
  readonly #calls: TrackedCall[] = [];
  readonly #usedIds = new Set<string>();
  /** Whether any call came signed (most servers sign none: `signedCalls` then has nothing to make). */
  #signed = false;

  get hasCalls(): boolean {
    return this.#calls.some((call) => call.name !== null);
  }

  accept(fragment: ToolCallFragment, out: TurnEvent[]): void {
    let call = this.#bySlot.get(fragment.slot);
    if (!call || (fragment.id && call.upstreamId && fragment.id !== call.upstreamId) || startsAnother(call, fragment)) {
      call = { callId: this.#uniqueId(fragment.id), upstreamId: fragment.id, name: null, buffered: '', arguments: '', freeformInput: null, signature: null };
      this.#bySlot.set(fragment.slot, call);
      this.#calls.push(call);
    } else if (fragment.id && !call.upstreamId) {
      call.upstreamId = fragment.id;
    }

    if (fragment.signature) {
      call.signature = fragment.signature;
      this.#signed = true;
    }
    if (call.name === null && fragment.name) {
      call.name = fragment.name;
      out.push({ type: 'tool_call.start', callId: call.callId, name: call.name });
      if (call.buffered) out.push({ type: 'tool_call.delta', callId: call.callId, delta: call.buffered });
      call.buffered = '';
    }
    if (fragment.freeform) {
      call.freeformInput = (call.freeformInput ?? '') + (fragment.arguments ?? '');
      return;
    }
    if (fragment.arguments) {
      call.arguments += fragment.arguments;
      if (call.name === null) call.buffered += fragment.arguments;
      else out.push({ type: 'tool_call.delta', callId: call.callId, delta: fragment.arguments });
    }
  }

  /**
   * Gives each freeform call its input, whole: its pieces are raw text, and
   * only the whole of it can be wrapped as the JSON argument the engine holds.
   */
  closeFreeform(out: TurnEvent[]): void {
    for (const call of this.#calls) {
      if (call.freeformInput === null || call.name === null) continue;
      out.push({ type: 'tool_call.delta', callId: call.callId, delta: freeformArguments(call.freeformInput) });
      call.freeformInput = null;
    }
  }

  /** The calls that came signed, with the name and arguments they ended with. */
  signedCalls(): readonly SignedCall[] {
    if (!this.#signed) return NONE_SIGNED;
    const signed: SignedCall[] = [];
    for (const call of this.#calls) if (call.signature !== null && call.name !== null) signed.push({ callId: call.callId, name: call.name, arguments: call.arguments, signature: call.signature });
    return signed;
  }

  #uniqueId(upstreamId: string | null): string {
    let id = upstreamId || newId('call');
    if (this.#usedIds.has(id)) id = newId('call');
    this.#usedIds.add(id);
    return id;
  }
}

/** A name and arguments after a complete argument object: the fragment is the next call, sent with neither index nor id. */
function startsAnother(call: TrackedCall, fragment: ToolCallFragment): boolean {
  if (call.name === null || !fragment.name || !fragment.arguments || call.arguments === '') return false;
  if (fragment.name !== call.name) return true;
  try {
    JSON.parse(call.arguments);
    return true;
  } catch {
    return false;
  }
}
