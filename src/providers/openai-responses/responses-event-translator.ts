import { HOSTED_PROGRESS_EVENT, isHostedCallItemType } from '../../protocol/hosted-tools.ts';
import type { HostedCallItem, TextAnnotation } from '../../protocol/output-items.ts';
import { newId } from '../../util/ids.ts';
import type { HostedProgressEvent, TokenLogprob, TurnEvent, TurnUsage } from '../provider.ts';
import { freeformArguments } from '../../protocol/freeform-call.ts';
import { mapResponsesFinishReason } from './map-responses-finish-reason.ts';
import { MessagePartOffsets, shiftAnnotation } from './part-offsets.ts';
import { ItemIdentities } from './item-identities.ts';
import { errorEventFrom } from '../upstream-errors.ts';
import type { ResponsesBody, ResponsesLogprob, ResponsesOutputItem, ResponsesStreamEvent, ResponsesUsage } from './responses-wire.ts';

/**
 * Turns Responses API stream events (or the items of one whole response) into
 * provider-neutral turn events. Items map one to one: text and refusals to
 * deltas, function calls to tool calls keyed by their `call_id`, reasoning
 * text to reasoning deltas and its `encrypted_content` to `reasoning.encrypted`,
 * freeform tool calls (`custom_tool_call`) to tool calls whose arguments are
 * `{"input": …}` (given whole once the input is: clients see a freeform
 * call's input only when it is complete),
 * text annotations (web search citations) to `text.annotation`. Hosted tool
 * calls the upstream ran (`web_search_call`, …) pass through opaque: added,
 * their progress events, done with the upstream's finished item.
 *
 * Policy for everything else (lifecycle events, content-part bookkeeping):
 * ignored, since the gateway builds its own items.
 * A server that only fills in `output_item.done` (no deltas), or only the
 * terminal response's `output`, is read from that.
 */
export class ResponsesEventTranslator {
  /** Function calls by item id, with whether their arguments were streamed. */
  readonly #calls = new Map<string, { callId: string; streamedArguments: boolean }>();
  /** Freeform calls by item id: their input so far, until it is given whole. */
  readonly #freeform = new Map<string, { callId: string; input: string; given: boolean }>();
  /** Items whose text (message or reasoning) arrived as deltas. */
  readonly #streamed = new Set<string>();
  /** Items read whole, so the terminal response's copy of them is not read again. */
  readonly #done = new Set<string>();
  /** Messages begun (each its own message for the client, with its phase). */
  readonly #messages = new Set<string>();
  /** Reasoning items already started, by the upstream's item id. */
  readonly #reasoning = new Set<string>();
  /** Messages whose annotations arrived as events. */
  readonly #annotated = new Set<string>();
  /** Where each streamed text part of a message starts in its joined text. */
  readonly #parts = new MessagePartOffsets();
  /** Hosted calls already added, and those already done, by the upstream's item id. */
  readonly #hosted = new Set<string>();
  readonly #hostedDone = new Set<string>();
  /** Which upstream item each event and terminal copy is about (item-identities.ts): the keys of the maps above. */
  readonly #ids = new ItemIdentities();
  #final: ResponsesBody | null = null;
  #identified = false;
  /** Whether the answer holds anything a client gets: text, a refusal, a call. */
  #answered = false;
  /** Output items of kinds this translator does not know (a tool the gateway never offered, a kind newer than it). */
  readonly #unknown = new Set<string>();
  /** Told, once the answer is read, of the kinds of output items left out of it. */
  readonly #onLeftOut: ((types: string[]) => void) | null;

  constructor(onLeftOut: ((types: string[]) => void) | null = null) {
    this.#onLeftOut = onLeftOut;
  }

  accept(event: ResponsesStreamEvent, out: TurnEvent[]): void {
    switch (event.type) {
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued':
        this.identify((event as { response: ResponsesBody }).response, out);
        return;
      case 'response.output_item.added': {
        const { item, output_index } = event as { item: ResponsesOutputItem; output_index?: unknown };
        if (item === null || typeof item !== 'object') return;
        const key = this.#ids.added(item, output_index);
        if (isFunctionCall(item)) {
          if (!this.#calls.has(key)) this.#startCall(item, key, out);
        } else if (isCustomCall(item)) {
          if (!this.#freeform.has(key)) this.#startFreeform(item, key, out);
        } else if (isMessage(item)) {
          if (!this.#messages.has(key)) this.#startMessage(item, key, out);
        } else if (isReasoning(item)) {
          if (!this.#reasoning.has(key)) this.#startReasoning(key, out);
        }
        // One without an id (a compatible server) is added when done, where it is known whole.
        else if (isHostedCall(item) && item.id) this.#addHosted(item, out);
        return;
      }
      case 'response.output_text.annotation.added': {
        const { item_id, output_index, content_index, annotation } = event as { item_id: string; output_index?: unknown; content_index?: number; annotation: unknown };
        if (!isAnnotation(annotation)) return;
        const key = this.#ids.deltaKey(item_id, output_index, 'message');
        this.#annotated.add(key);
        out.push({ type: 'text.annotation', annotation: shiftAnnotation(annotation, this.#parts.startOf(key, content_index ?? 0)) });
        return;
      }
      case 'response.output_item.done': {
        const { item, output_index } = event as { item: ResponsesOutputItem; output_index?: unknown };
        if (item !== null && typeof item === 'object') this.acceptItem(item, out, this.#ids.finished(item, output_index));
        return;
      }
      case 'response.output_text.delta': {
        const { item_id, output_index, content_index, delta, logprobs } = event as { item_id: string; output_index?: unknown; content_index?: number; delta: string; logprobs?: ResponsesLogprob[] };
        const key = this.#messageOfDelta(item_id, output_index, out);
        this.#streamed.add(key);
        this.#parts.text(key, content_index ?? 0, delta);
        this.#answered ||= delta !== '';
        out.push(textDelta(delta, logprobs));
        return;
      }
      case 'response.refusal.delta': {
        const { item_id, output_index, delta } = event as { item_id: string; output_index?: unknown; delta: string };
        this.#streamed.add(this.#messageOfDelta(item_id, output_index, out));
        this.#answered ||= delta !== '';
        out.push({ type: 'refusal.delta', delta });
        return;
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta': {
        const { item_id, output_index, delta } = event as { item_id: string; output_index?: unknown; delta: string };
        const key = this.#ids.deltaKey(item_id, output_index, 'reasoning');
        // Reasoning before its item was added (a compatible server) is an item all the same.
        if (!this.#reasoning.has(key)) this.#startReasoning(key, out);
        this.#streamed.add(key);
        out.push({ type: 'reasoning.delta', delta });
        return;
      }
      case 'response.reasoning_summary_part.added':
        // Summary parts are separate paragraphs; the reasoning item carries one text.
        if ((event as { summary_index?: number }).summary_index) out.push({ type: 'reasoning.delta', delta: '\n\n' });
        return;
      case 'response.function_call_arguments.delta': {
        const { item_id, output_index, delta } = event as { item_id: string; output_index?: unknown; delta: string };
        const call = this.#calls.get(this.#ids.deltaKey(item_id, output_index, 'function_call'));
        if (!call || !delta) return;
        call.streamedArguments = true;
        out.push({ type: 'tool_call.delta', callId: call.callId, delta });
        return;
      }
      case 'response.custom_tool_call_input.delta': {
        const { item_id, output_index, delta } = event as { item_id: string; output_index?: unknown; delta: string };
        const call = this.#freeform.get(this.#ids.deltaKey(item_id, output_index, 'custom_tool_call'));
        if (call && !call.given && typeof delta === 'string') call.input += delta;
        return;
      }
      case 'response.custom_tool_call_input.done': {
        const { item_id, output_index, input } = event as { item_id: string; output_index?: unknown; input?: unknown };
        const call = this.#freeform.get(this.#ids.deltaKey(item_id, output_index, 'custom_tool_call'));
        if (call) this.#giveFreeform(call, typeof input === 'string' ? input : call.input, out);
        return;
      }
      case 'response.completed':
      case 'response.incomplete': {
        const { response } = event as { response: ResponsesBody };
        this.identify(response, out);
        reportTier(response, out);
        // Only what the stream never said: an item it added or finished is the same item here, whatever id it now has.
        const items = (Array.isArray(response.output) ? response.output : []).filter((item): item is ResponsesOutputItem => item !== null && typeof item === 'object');
        const keys = this.#ids.final(items);
        for (const [index, item] of items.entries()) {
          const key = keys[index]!;
          if (!this.#done.has(key) && !this.#calls.has(key)) this.acceptItem(item, out, key);
        }
        // A freeform call whose input was streamed but never said done: what arrived is its input.
        for (const call of this.#freeform.values()) this.#giveFreeform(call, call.input, out);
        this.#final = response;
        return;
      }
      case 'response.failed': {
        const { response } = event as { response: ResponsesBody };
        // What the failed call used is billed all the same: charged before the failure (the loop counts usage it sees before an error).
        if (response?.usage) out.push({ type: 'usage', usage: mapUsage(response.usage) });
        out.push(errorEventFrom(response?.error ?? {}));
        return;
      }
      case 'error': {
        // OpenAI's own stream nests the error (`{"type": "error", "error": {type, code, message, param}}`); older servers put its fields at the top.
        const { code, message, param, error } = event as { code?: unknown; message?: unknown; param?: unknown; error?: Record<string, unknown> | null };
        out.push(errorEventFrom(error && typeof error === 'object' ? error : { code, message, param }));
        return;
      }
      default:
        this.#acceptHostedProgress(event, out);
        return;
    }
  }

  /** Reads one finished output item (`key`: which item it is, item-identities.ts; by default its index `outputIndex` in a whole answer): what its deltas did not already say. */
  acceptItem(item: ResponsesOutputItem, out: TurnEvent[], key: string = this.#ids.finished(item, undefined)): void {
    this.#done.add(key);
    if (isFunctionCall(item)) {
      const call = this.#calls.get(key) ?? this.#startCall(item, key, out);
      if (!call.streamedArguments && item.arguments) out.push({ type: 'tool_call.delta', callId: call.callId, delta: item.arguments });
      call.streamedArguments = true;
      return;
    }
    if (isCustomCall(item)) {
      const call = this.#freeform.get(key) ?? this.#startFreeform(item, key, out);
      this.#giveFreeform(call, typeof item.input === 'string' ? item.input : call.input, out);
      return;
    }
    if (isMessage(item)) {
      if (!this.#messages.has(key)) this.#startMessage(item, key, out);
      const streamed = this.#streamed.has(key);
      const annotated = this.#annotated.has(key);
      // Where each text part starts once the parts are joined: a citation counts from its own part's start.
      let partStart = 0;
      for (const part of item.content ?? []) {
        if ((part.type === 'output_text' && part.text) || (part.type === 'refusal' && part.refusal)) this.#answered = true;
        if (part.type === 'output_text') {
          if (!streamed && part.text) out.push(textDelta(part.text, part.logprobs));
          // Annotations only in the finished item (no annotation events): said after the text they point into.
          if (!annotated) for (const annotation of part.annotations ?? []) if (isAnnotation(annotation)) out.push({ type: 'text.annotation', annotation: shiftAnnotation(annotation, partStart) });
          partStart += typeof part.text === 'string' ? part.text.length : 0;
        } else if (part.type === 'refusal' && part.refusal && !streamed) out.push({ type: 'refusal.delta', delta: part.refusal });
      }
      return;
    }
    if (isHostedCall(item)) {
      const added = this.#addHosted(item, out);
      if (this.#hostedDone.has(added.id)) return;
      this.#hostedDone.add(added.id);
      out.push({ type: 'hosted_item.done', item: added });
      return;
    }
    if (isReasoning(item)) {
      if (!this.#reasoning.has(key)) this.#startReasoning(key, out);
      if (!this.#streamed.has(key)) {
        const text = [...(item.summary ?? []).map((part) => part.text), ...(item.content ?? []).map((part) => part.text)].filter(Boolean).join('\n\n');
        if (text) out.push({ type: 'reasoning.delta', delta: text });
      }
      if (item.encrypted_content) out.push({ type: 'reasoning.encrypted', value: item.encrypted_content });
      return;
    }
    if (typeof item.type === 'string') this.#unknown.add(item.type);
  }

  /** Says once which response and model the upstream answers with. */
  identify(response: ResponsesBody | undefined, out: TurnEvent[]): void {
    if (this.#identified || !response || (!response.id && !response.model)) return;
    this.#identified = true;
    out.push({ type: 'upstream.response', id: typeof response.id === 'string' ? response.id : null, model: typeof response.model === 'string' ? response.model : null });
  }

  /** Marks the final response of a non-streamed call. */
  setFinal(response: ResponsesBody): void {
    this.#final = response;
  }

  /** Whether a terminal response arrived; a stream that closes without one was cut off. */
  get finished(): boolean {
    return this.#final !== null;
  }

  /** The closing events: usage, then the finish. */
  finish(out: TurnEvent[]): void {
    if (!this.#final) return;
    // An answer made only of items the gateway cannot pass on would complete empty: it fails, naming them.
    if (this.#unknown.size > 0 && !this.#answered && this.#calls.size === 0 && this.#hosted.size === 0) {
      out.push({ type: 'error', code: 'upstream_no_answer', message: `The upstream answered only with output of a kind this gateway cannot pass on (${[...this.#unknown].join(', ')}).` });
      return;
    }
    // Beside an answer they are left out, and the operator is told which.
    if (this.#unknown.size > 0) this.#onLeftOut?.([...this.#unknown]);
    if (this.#final.usage) out.push({ type: 'usage', usage: mapUsage(this.#final.usage) });
    out.push({ type: 'finish', finish: mapResponsesFinishReason(this.#final, this.#calls.size > 0) });
  }

  /** Adds a hosted call once (a non-streamed answer, or a server that sends only `done`, adds it here first); returns it with its id settled. */
  #addHosted(item: Extract<ResponsesOutputItem, { type: HostedCallItem['type'] }>, out: TurnEvent[]): HostedCallItem {
    // A compatible server may leave the id out; the gateway needs one to show and return the item by.
    const hosted = { ...item, id: typeof item.id === 'string' && item.id ? item.id : newId('hc') } as HostedCallItem;
    if (!this.#hosted.has(hosted.id)) {
      this.#hosted.add(hosted.id);
      out.push({ type: 'hosted_item.added', item: hosted });
    }
    return hosted;
  }

  /** A hosted call's progress event (`response.web_search_call.searching`, …), passed on without its position on the upstream's stream. */
  #acceptHostedProgress(event: ResponsesStreamEvent, out: TurnEvent[]): void {
    const isProgress = HOSTED_PROGRESS_EVENT.test(event.type);
    const { item_id: itemId, output_index: _index, sequence_number: _sequence, ...rest } = event as { type: string; item_id?: unknown; output_index?: unknown; sequence_number?: unknown };
    if (!isProgress || typeof itemId !== 'string' || !this.#hosted.has(itemId)) return;
    out.push({ type: 'hosted_item.progress', itemId, event: rest as HostedProgressEvent });
  }

  /** The message a text or refusal delta is about, begun now if its item was not added first (a compatible server). */
  #messageOfDelta(itemId: unknown, outputIndex: unknown, out: TurnEvent[]): string {
    const key = this.#ids.deltaKey(itemId, outputIndex, 'message');
    if (!this.#messages.has(key)) this.#startMessage({}, key, out);
    return key;
  }

  #startMessage(item: { phase?: unknown }, key: string, out: TurnEvent[]): void {
    this.#messages.add(key);
    const phase = item.phase === 'commentary' || item.phase === 'final_answer' ? item.phase : undefined;
    out.push(phase ? { type: 'message.start', phase } : { type: 'message.start' });
  }

  /** A reasoning item of its own: two in one answer are two items, whether or not each ends with encrypted content. */
  #startReasoning(key: string, out: TurnEvent[]): void {
    this.#reasoning.add(key);
    out.push({ type: 'reasoning.start' });
  }

  #startFreeform(item: Extract<ResponsesOutputItem, { type: 'custom_tool_call' }>, key: string, out: TurnEvent[]): { callId: string; input: string; given: boolean } {
    // Counted among the calls, which is what makes the finish a tool call.
    this.#calls.set(key, { callId: item.call_id, streamedArguments: true });
    const call = { callId: item.call_id, input: typeof item.input === 'string' ? item.input : '', given: false };
    this.#freeform.set(key, call);
    out.push({ type: 'tool_call.start', callId: item.call_id, name: item.name });
    return call;
  }

  #giveFreeform(call: { callId: string; input: string; given: boolean }, input: string, out: TurnEvent[]): void {
    if (call.given) return;
    call.given = true;
    out.push({ type: 'tool_call.delta', callId: call.callId, delta: freeformArguments(input) });
  }

  #startCall(item: Extract<ResponsesOutputItem, { type: 'function_call' }>, key: string, out: TurnEvent[]): { callId: string; streamedArguments: boolean } {
    const call = { callId: item.call_id, streamedArguments: false };
    this.#calls.set(key, call);
    out.push({ type: 'tool_call.start', callId: item.call_id, name: item.name });
    return call;
  }
}

function isFunctionCall(item: ResponsesOutputItem): item is Extract<ResponsesOutputItem, { type: 'function_call' }> {
  return item.type === 'function_call' && typeof (item as { call_id?: unknown }).call_id === 'string' && typeof (item as { name?: unknown }).name === 'string';
}

function isCustomCall(item: ResponsesOutputItem): item is Extract<ResponsesOutputItem, { type: 'custom_tool_call' }> {
  return item.type === 'custom_tool_call' && typeof (item as { call_id?: unknown }).call_id === 'string' && typeof (item as { name?: unknown }).name === 'string';
}

function isHostedCall(item: ResponsesOutputItem): item is Extract<ResponsesOutputItem, { type: HostedCallItem['type'] }> {
  return isHostedCallItemType(item.type);
}

function isAnnotation(value: unknown): value is TextAnnotation {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && typeof (value as { type?: unknown }).type === 'string';
}

function isMessage(item: ResponsesOutputItem): item is Extract<ResponsesOutputItem, { type: 'message' }> {
  return item.type === 'message';
}

function isReasoning(item: ResponsesOutputItem): item is Extract<ResponsesOutputItem, { type: 'reasoning' }> {
  return item.type === 'reasoning';
}

function textDelta(delta: string, logprobs: ResponsesLogprob[] | undefined): TurnEvent {
  return logprobs?.length ? { type: 'text.delta', delta, logprobs: logprobs.map(mapLogprob) } : { type: 'text.delta', delta };
}

function mapLogprob(token: ResponsesLogprob): TokenLogprob {
  return {
    token: token.token,
    logprob: token.logprob,
    bytes: token.bytes ?? [],
    top_logprobs: (token.top_logprobs ?? []).map((top) => ({ token: top.token, logprob: top.logprob, bytes: top.bytes ?? [] })),
  };
}

function mapUsage(usage: ResponsesUsage): TurnUsage {
  return {
    inputTokens: usage.input_tokens ?? 0,
    outputTokens: usage.output_tokens ?? 0,
    cachedInputTokens: usage.input_tokens_details?.cached_tokens ?? 0,
    reasoningTokens: usage.output_tokens_details?.reasoning_tokens ?? 0,
  };
}

/** The tier the final response says it was served at (`response.created` still says the one asked for). */
export function reportTier(response: ResponsesBody, out: TurnEvent[]): void {
  if (typeof response.service_tier === 'string') out.push({ type: 'service_tier', tier: response.service_tier });
}
