import type { ToolCall } from '../executors/tool-executor.ts';
import { clientCallItem } from './client-call-kinds.ts';
import type { ClientToolName } from './declared-tools.ts';
import type { FunctionCallOutputItem, FunctionCallResultItem, HostedCallItem, ItemStatus, MessageOutputItem, OutputItem, ReasoningOutputItem, TextAnnotation } from '../protocol/output-items.ts';
import type { ResponseStreamEventBody } from '../protocol/stream-events.ts';
import type { TokenLogprob, TurnEvent } from '../providers/provider.ts';
import { assertNever } from '../util/assert-never.ts';
import { newId } from '../util/ids.ts';
import { sealReasoningText } from '../protocol/sealed-reasoning-text.ts';

/** How a turn ended, for the items it left open (closeAll). */
export type TurnEnd = 'finished' | 'cut_short' | 'broken';

/** Where the builder's events go; null when nobody reads them (a JSON reply), and then they are not even built. */
export type Emit = ((event: ResponseStreamEventBody) => void) | null;

interface OpenMessage {
  item: MessageOutputItem;
  index: number;
  part: { kind: 'output_text' | 'refusal'; contentIndex: number; text: string; logprobs: TokenLogprob[]; annotations: TextAnnotation[] } | null;
}
interface OpenCall {
  item: FunctionCallOutputItem;
  index: number;
}
interface OpenReasoning {
  item: ReasoningOutputItem;
  index: number;
  text: string;
  /** Whether its summary part was announced (`reasoning_summary_part.added`). */
  summarizing: boolean;
}

/**
 * Builds the response's `output` from provider-neutral turn events and emits
 * the item-scoped OpenResponses events for it. It is the only owner of
 * `output_index` and item ids, and of the ordering rules clients depend on:
 * an item is added before its deltas, a content part before its text, and
 * every item is done before the response ends.
 */
export class OutputBuilder {
  readonly output: OutputItem[] = [];
  #message: OpenMessage | null = null;
  /** The phase the upstream gave the message its next text starts (message.start). */
  #nextPhase: MessageOutputItem['phase'] | null = null;
  #reasoning: OpenReasoning | null = null;
  readonly #calls = new Map<string, OpenCall>();
  /** Calls shown later as other items (MCP calls): collected silently. */
  readonly #hidden = new Map<string, { callId: string; name: string; arguments: string }>();
  readonly #isHidden: (toolName: string) => boolean;
  readonly #clientName: (toolName: string) => ClientToolName | null;
  #turnCalls: { callId: string; name: string; item: FunctionCallOutputItem | null; terminal: boolean }[] = [];
  readonly #customAdded = new Set<string>();
  /** Hosted calls the upstream is still running, by their (upstream's) item id. */
  readonly #hosted = new Map<string, { item: HostedCallItem; index: number }>();

  readonly #summarizeReasoning: boolean;
  readonly #sealReasoning: boolean;

  /**
   * `isHidden` names tools whose calls must not appear as `function_call`
   * items; `clientName` gives a namespaced function's own name and namespace,
   * which its `function_call` item shows instead of the name the model used.
   * `summarizeReasoning`: the client asked for reasoning summaries
   * (`reasoning.summary`), so the model's reasoning is its summary too.
   */
  constructor(isHidden: (toolName: string) => boolean = () => false, clientName: (toolName: string) => ClientToolName | null = () => null, summarizeReasoning = false, sealReasoning = false) {
    this.#isHidden = isHidden;
    this.#clientName = clientName;
    this.#summarizeReasoning = summarizeReasoning;
    this.#sealReasoning = sealReasoning;
  }

  /** Marks where the next model turn's items begin. */
  startTurn(): void {
    this.#turnCalls = [];
    this.#hidden.clear();
    this.#customAdded.clear();
  }

  /** Whether the current turn made any call, shown or hidden. */
  get turnMadeCalls(): boolean {
    return this.#turnCalls.length > 0;
  }

  /** Every call the current turn produced, shown or hidden, in the order the model made them. */
  turnCalls(): ToolCall[] {
    return this.#turnCalls.map((call) => ({
      ...(call.item ? { callId: call.callId, name: call.name, arguments: call.item.arguments } : this.#hidden.get(call.callId)!),
      ...(call.terminal && { terminal: true }),
    }));
  }

  /** Adds a finished item as a whole (announcements such as `mcp_list_tools`, approval requests). */
  addItem(item: OutputItem, emit: Emit): void {
    const index = this.#add(item, emit);
    emit?.({ type: 'response.output_item.done', output_index: index, item });
  }

  /** Adds an item that is still running; finish it with `finishItem`. */
  beginItem<T extends OutputItem>(item: T, emit: Emit): { item: T; index: number } {
    return { item, index: this.#add(item, emit) };
  }

  finishItem(pending: { item: OutputItem; index: number }, emit: Emit): void {
    emit?.({ type: 'response.output_item.done', output_index: pending.index, item: pending.item });
  }

  /**
   * Adds the output item of a call whose result is still pending — a
   * `function_call_output`, or a `custom_tool_call_output` for a call of a
   * client's freeform tool (a call closed or refused unrun is answered as its
   * kind is: a client resending the output finds it paired); finish it with
   * `finishToolOutput`.
   */
  beginToolOutput(call: { callId: string; name: string }, emit: Emit): { item: FunctionCallResultItem; index: number } {
    const custom = this.#clientName(call.name)?.kind === 'custom';
    const item: FunctionCallResultItem = { type: custom ? 'custom_tool_call_output' : 'function_call_output', id: newId(custom ? 'ctco' : 'fco'), call_id: call.callId, output: '', status: 'in_progress' };
    return { item, index: this.#add(item, emit) };
  }

  finishToolOutput(pending: { item: FunctionCallResultItem; index: number }, output: FunctionCallResultItem['output'], emit: Emit): void {
    pending.item.output = output;
    pending.item.status = 'completed';
    emit?.({ type: 'response.output_item.done', output_index: pending.index, item: pending.item });
  }

  apply(event: TurnEvent, emit: Emit): void {
    switch (event.type) {
      case 'message.start':
        this.#closeReasoning(emit);
        this.#closeMessage('completed', emit);
        this.#nextPhase = event.phase ?? null;
        return;
      case 'text.delta':
        this.#appendMessageText('output_text', event.delta, emit, event.logprobs);
        return;
      case 'refusal.delta':
        this.#appendMessageText('refusal', event.delta, emit);
        return;
      case 'reasoning.start':
        this.#closeReasoning(emit);
        return;
      case 'reasoning.delta':
        this.#appendReasoning(event.delta, emit);
        return;
      case 'reasoning.encrypted':
        if (!this.#reasoning) this.#appendReasoning('', emit);
        this.#reasoning!.item.encrypted_content = event.value;
        this.#closeReasoning(emit);
        return;
      case 'tool_call.start': {
        // A freeform tool's text is only known once its arguments are complete: collected, then added whole (closeAll).
        if (this.#isHidden(event.name) || this.#clientName(event.name)?.kind) {
          this.#hidden.set(event.callId, { callId: event.callId, name: event.name, arguments: '' });
          this.#turnCalls.push({ callId: event.callId, name: event.name, item: null, terminal: event.terminal === true });
          return;
        }
        this.#closeMessage('completed', emit);
        this.#closeReasoning(emit);
        const shown = this.#clientName(event.name);
        const item: FunctionCallOutputItem = { type: 'function_call', id: newId('fc'), call_id: event.callId, name: shown?.name ?? event.name, ...(shown?.namespace && { namespace: shown.namespace }), arguments: '', status: 'in_progress' };
        const index = this.#add(item, emit);
        this.#calls.set(event.callId, { item, index });
        this.#turnCalls.push({ callId: event.callId, name: event.name, item, terminal: event.terminal === true });
        return;
      }
      case 'tool_call.delta': {
        const hidden = this.#hidden.get(event.callId);
        if (hidden) hidden.arguments += event.delta;
        const call = this.#calls.get(event.callId);
        if (!call) return;
        call.item.arguments += event.delta;
        emit?.({ type: 'response.function_call_arguments.delta', item_id: call.item.id, output_index: call.index, delta: event.delta });
        return;
      }
      case 'text.annotation':
        this.#annotate(event.annotation, emit);
        return;
      case 'hosted_item.added': {
        this.#hosted.set(event.item.id, this.#addHosted({ ...event.item }, emit));
        return;
      }
      case 'hosted_item.progress': {
        const open = this.#hosted.get(event.itemId);
        if (open) emit?.({ ...event.event, item_id: open.item.id, output_index: open.index });
        return;
      }
      case 'hosted_item.done': {
        const open = this.#hosted.get(event.item.id) ?? this.#addHosted(event.item, emit);
        // The upstream's finished item replaces what was added, as it is.
        this.output[open.index] = event.item;
        emit?.({ type: 'response.output_item.done', output_index: open.index, item: event.item });
        this.#hosted.delete(event.item.id);
        return;
      }
      case 'compaction':
        this.#closeReasoning(emit);
        this.#closeMessage('completed', emit);
        this.addItem(event.item, emit);
        return;
      case 'usage':
      case 'finish':
      case 'error':
      case 'upstream.response':
      case 'service_tier':
        return;
      default:
        assertNever(event);
    }
  }

  /**
   * Closes every open item: `completed` when the model ended its turn,
   * `incomplete` when it stopped at a limit (`cut_short`) or the turn broke
   * off (`broken`: the upstream failed, the response was stopped). What the
   * model was still writing when its turn broke off is never done: clients
   * take a done item for the model's own (Codex and the AI SDK run a done
   * call; Codex keeps a done message in the history it resends when it
   * retries), so it stays in the output as it stood, `incomplete`, announced
   * and never finished. What the model's own limit cut is done `incomplete`,
   * as OpenAI ends it.
   */
  closeAll(end: TurnEnd, emit: Emit): void {
    const status: ItemStatus = end === 'finished' ? 'completed' : 'incomplete';
    const closing = end === 'broken' ? null : emit;
    this.#closeReasoning(closing);
    this.#closeMessage(status, closing);
    // A hosted call the upstream never finished (the turn was cut short) ends as it stood, marked incomplete.
    for (const open of this.#hosted.values()) {
      open.item.status = 'incomplete';
      closing?.({ type: 'response.output_item.done', output_index: open.index, item: open.item });
    }
    this.#hosted.clear();
    this.#addCustomCalls(status, end !== 'broken', emit);
    for (const call of this.#calls.values()) {
      call.item.status = status;
      closing?.({ type: 'response.function_call_arguments.done', item_id: call.item.id, output_index: call.index, arguments: call.item.arguments });
      closing?.({ type: 'response.output_item.done', output_index: call.index, item: call.item });
    }
    this.#calls.clear();
  }

  /** The turn's calls of tools that are not functions for the client, added whole once their arguments are complete (client-call-kinds.ts). */
  #addCustomCalls(status: ItemStatus, finished: boolean, emit: Emit): void {
    for (const call of this.#turnCalls) {
      const shown = call.item === null ? this.#clientName(call.name) : null;
      const collected = this.#hidden.get(call.callId);
      if (!shown?.kind || !collected || this.#customAdded.has(call.callId)) continue;
      this.#customAdded.add(call.callId);
      const item = clientCallItem({ ...shown, kind: shown.kind }, collected, status);
      const index = this.#add(item, emit);
      if (finished) emit?.({ type: 'response.output_item.done', output_index: index, item });
    }
  }

  #addHosted(item: HostedCallItem, emit: Emit): { item: HostedCallItem; index: number } {
    this.#closeMessage('completed', emit);
    this.#closeReasoning(emit);
    return { item, index: this.#add(item, emit) };
  }

  /** Adds an annotation to the output text being written (opened, empty, when there is none yet). */
  #annotate(annotation: TextAnnotation, emit: Emit): void {
    if (this.#message?.part?.kind !== 'output_text') this.#appendMessageText('output_text', '', emit);
    const message = this.#message!;
    const part = message.part!;
    part.annotations.push(annotation);
    emit?.({
      type: 'response.output_text.annotation.added',
      item_id: message.item.id,
      output_index: message.index,
      content_index: part.contentIndex,
      annotation_index: part.annotations.length - 1,
      annotation,
    });
  }

  #add(item: OutputItem, emit: Emit): number {
    const index = this.output.length;
    this.output.push(item);
    // The added event carries a snapshot: the live item keeps growing.
    emit?.({ type: 'response.output_item.added', output_index: index, item: snapshot(item) });
    return index;
  }

  #appendMessageText(kind: 'output_text' | 'refusal', delta: string, emit: Emit, logprobs: TokenLogprob[] = []): void {
    this.#closeReasoning(emit);
    let message = this.#message;
    if (!message) {
      const item: MessageOutputItem = { type: 'message', id: newId('msg'), status: 'in_progress', role: 'assistant', content: [], ...(this.#nextPhase && { phase: this.#nextPhase }) };
      this.#nextPhase = null;
      message = { item, index: this.#add(item, emit), part: null };
      this.#message = message;
    }
    let part = message.part;
    if (part && part.kind !== kind) {
      this.#closePart(message, emit);
      part = null;
    }
    if (!part) {
      part = { kind, contentIndex: message.item.content.length, text: '', logprobs: [], annotations: [] };
      message.part = part;
      const content = kind === 'output_text' ? { type: 'output_text' as const, text: '', annotations: [] } : { type: 'refusal' as const, refusal: '' };
      message.item.content.push(content);
      emit?.({ type: 'response.content_part.added', item_id: message.item.id, output_index: message.index, content_index: part.contentIndex, part: { ...content } });
    }
    part.text += delta;
    for (const logprob of logprobs) part.logprobs.push(logprob);
    const scope = { item_id: message.item.id, output_index: message.index, content_index: part.contentIndex };
    if (kind === 'output_text') emit?.({ type: 'response.output_text.delta', ...scope, delta, logprobs });
    else emit?.({ type: 'response.refusal.delta', ...scope, delta });
  }

  #closePart(message: OpenMessage, emit: Emit): void {
    const part = message.part;
    if (!part) return;
    const scope = { item_id: message.item.id, output_index: message.index, content_index: part.contentIndex };
    const content =
      part.kind === 'output_text'
        ? { type: 'output_text' as const, text: part.text, annotations: part.annotations, ...(part.logprobs.length > 0 && { logprobs: part.logprobs }) }
        : { type: 'refusal' as const, refusal: part.text };
    message.item.content[part.contentIndex] = content;
    if (content.type === 'output_text') emit?.({ type: 'response.output_text.done', ...scope, text: content.text, logprobs: part.logprobs });
    else emit?.({ type: 'response.refusal.done', ...scope, refusal: content.refusal });
    emit?.({ type: 'response.content_part.done', ...scope, part: content });
    message.part = null;
  }

  #closeMessage(status: ItemStatus, emit: Emit): void {
    const message = this.#message;
    if (!message) return;
    this.#closePart(message, emit);
    message.item.status = status;
    emit?.({ type: 'response.output_item.done', output_index: message.index, item: message.item });
    this.#message = null;
  }

  #appendReasoning(delta: string, emit: Emit): void {
    if (!this.#reasoning) {
      this.#closeMessage('completed', emit);
      const item: ReasoningOutputItem = { type: 'reasoning', id: newId('rs'), summary: [] };
      this.#reasoning = { item, index: this.#add(item, emit), text: '', summarizing: false };
    }
    const reasoning = this.#reasoning;
    reasoning.text += delta;
    // The reasoning text itself is delivered whole in `output_item.done`: the schema's reasoning delta events are
    // unknown to the OpenAI SDK, which throws on them. Its summary events (asked for) are known, and are what the
    // AI SDK, LangChain and Codex show: streamed as they come.
    if (!this.#summarizeReasoning || !delta) return;
    const scope = { item_id: reasoning.item.id, output_index: reasoning.index, summary_index: 0 };
    if (!reasoning.summarizing) {
      reasoning.summarizing = true;
      emit?.({ type: 'response.reasoning_summary_part.added', ...scope, part: { type: 'summary_text', text: '' } });
    }
    emit?.({ type: 'response.reasoning_summary_text.delta', ...scope, delta });
  }

  #closeReasoning(emit: Emit): void {
    const reasoning = this.#reasoning;
    if (!reasoning) return;
    reasoning.item.content = reasoning.text ? [{ type: 'reasoning_text', text: reasoning.text }] : [];
    // Reasoning given in the clear, for a client that resends only sealed reasoning.
    if (this.#sealReasoning && reasoning.text && !reasoning.item.encrypted_content) reasoning.item.encrypted_content = sealReasoningText(reasoning.text);
    if (reasoning.summarizing) {
      // The model's reasoning, where the upstream gave no summary of its own: what the client asked to see.
      const part = { type: 'summary_text' as const, text: reasoning.text };
      reasoning.item.summary = [part];
      const scope = { item_id: reasoning.item.id, output_index: reasoning.index, summary_index: 0 };
      emit?.({ type: 'response.reasoning_summary_text.done', ...scope, text: reasoning.text });
      emit?.({ type: 'response.reasoning_summary_part.done', ...scope, part });
    }
    emit?.({ type: 'response.output_item.done', output_index: reasoning.index, item: reasoning.item });
    this.#reasoning = null;
  }
}

function snapshot(item: OutputItem): OutputItem {
  switch (item.type) {
    case 'message':
      return { ...item, content: [] };
    case 'reasoning':
      return { ...item, summary: [] };
    default:
      return { ...item };
  }
}
