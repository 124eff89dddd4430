import type { ModelInfo, Provider, TurnRequest, TurnStream } from '../provider.ts';
import { renderToolHistory } from './render-tool-history.ts';
import { textToolCallTurn } from './text-tool-call-turn.ts';
import { toolInstructions } from './tool-prompt.ts';
import { planToolUse, type ToolUsePlan } from './tool-use-plan.ts';

export interface TextToolCallOptions {
  /** Further model calls after a reply whose tool calls cannot be read. */
  retries: number;
}

/**
 * Tool calling for models that have none: a provider in front of another,
 * for the models configured with `toolCalls: "text"`. The upstream is sent
 * no tools, no `tool_choice` and no tool items: the tools and the call
 * protocol are described in the instructions (tool-prompt.ts), earlier calls
 * and results are written into the conversation as text
 * (render-tool-history.ts), and the model's text is read back into native
 * turn events (text-tool-call-turn.ts). The engine and the loop cannot tell.
 *
 * It runs no hosted tools (no `runsHostedTool`), whatever its upstream does:
 * a model calling tools in its text cannot call the upstream's own, so they
 * are omitted or refused by `loop.hostedTools` like anywhere else.
 */
export class TextToolCallProvider implements Provider {
  readonly name: string;
  readonly countInputTokens?: (request: TurnRequest, signal: AbortSignal) => Promise<number>;
  readonly #inner: Provider;
  readonly #retries: number;

  constructor(inner: Provider, options: TextToolCallOptions) {
    this.name = inner.name;
    this.#inner = inner;
    this.#retries = options.retries;
    // Counted as sent: the tools in the instructions, the history in text.
    const count = inner.countInputTokens?.bind(inner);
    if (count) this.countInputTokens = (request, signal) => count(plainTurnRequest(request, planToolUse(request)), signal);
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const plan = planToolUse(request);
    const upstream = plainTurnRequest(request, plan);
    const first = await this.#inner.startTurn(upstream, signal);
    // With no tool declared there is no call to read; with tools ruled out for this reply, one written anyway is sent back.
    if (plan.tools.length === 0 && !plan.forbidden) return first;
    return textToolCallTurn(first, { plan, request: upstream, retries: this.#retries, restart: (next) => this.#inner.startTurn(next, signal) });
  }

  listModels(signal: AbortSignal): Promise<ModelInfo[]> {
    return this.#inner.listModels(signal);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

/** `request` as a model without native tools is sent it. */
function plainTurnRequest(request: TurnRequest, plan: ToolUsePlan): TurnRequest {
  const history = renderToolHistory(request.items, request.historyLength);
  const section = toolInstructions(plan);
  const plain = { ...request, items: history.items, historyLength: history.historyLength, tools: [], hostedTools: [], hostedInclude: [], toolChoice: null, parallelToolCalls: null };
  // The tools go into the client's own system message when it opens the input: as instructions they would be a second one,
  // before it, and the chat templates of models run without native tools (Gemma's, Mistral's, Phi's) refuse all but one, first.
  const first = history.items[0];
  if (!request.instructions && section && first?.type === 'message' && (first.role === 'system' || first.role === 'developer')) {
    const content = typeof first.content === 'string' ? `${first.content}\n\n${section}` : [...first.content, { type: 'input_text' as const, text: `\n\n${section}` }];
    return { ...plain, instructions: null, items: [{ ...first, content }, ...history.items.slice(1)] };
  }
  const instructions = [request.instructions, section].filter(Boolean).join('\n\n');
  return { ...plain, instructions: instructions || null };
}
