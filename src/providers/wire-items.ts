import type { HostedCallInputItem, InputItem, MessageInputItem } from '../protocol/input-items.ts';
import { type EngineOnlyItem, isEngineOnlyItem } from './engine-only-items.ts';
import { isHostedCallItem } from './hosted-call-items.ts';
import { orderToolOutputs } from './order-tool-outputs.ts';

/** What a provider without hosted tools puts on its wire: messages, reasoning, function calls and their outputs. */
export type WireItem = Exclude<InputItem, EngineOnlyItem | HostedCallInputItem>;

/**
 * The conversation as the Chat, Anthropic and Gemini converters send it:
 * each tool output moved after the calls it answers, the items only the
 * engine or a hosted tool's own upstream reads passed over. `visit` gets each
 * item with the `param` its errors name: the request's own input as the
 * client sent it (the place it had before the reordering), or the stored
 * chain it inherited, which is all a client can be told about those.
 */
export function forEachWireItem(items: readonly InputItem[], historyLength: number, visit: (item: WireItem, param: string) => void): void {
  const positions = new Map(items.map((item, index) => [item, index]));
  for (const item of orderToolOutputs(items)) {
    const index = positions.get(item)!;
    const param = index < historyLength ? 'previous_response_id' : `input[${index - historyLength}]`;
    if (isEngineOnlyItem(item, param) || isHostedCallItem(item)) continue;
    visit(item, param);
  }
}

type InstructionMessage = Extract<MessageInputItem, { role: 'system' | 'developer' }>;
type AssistantMessage = Extract<MessageInputItem, { role: 'assistant' }>;

/** What is left of a conversation once its system and developer messages are taken out. */
export type TurnItem = Exclude<WireItem, InstructionMessage>;

/** A piece of the instructions: the request's own, or one system or developer message, and whether the client marked it a prompt-cache breakpoint. */
export interface InstructionPiece {
  text: string;
  cacheBreakpoint: boolean;
}

/**
 * For upstreams that take instructions apart from the turns (Anthropic's
 * `system`, Gemini's `systemInstruction`): walks the conversation as
 * `forEachWireItem` does, but gathers its system and developer messages,
 * after the request's own instructions, into the pieces it returns.
 */
export function separateInstructions(instructions: string | null, items: readonly InputItem[], historyLength: number, visit: (item: TurnItem, param: string) => void): InstructionPiece[] {
  const pieces: InstructionPiece[] = instructions ? [{ text: instructions, cacheBreakpoint: false }] : [];
  forEachWireItem(items, historyLength, (item, param) => {
    if (!isInstruction(item)) return visit(item, param);
    if (typeof item.content === 'string') pieces.push({ text: item.content, cacheBreakpoint: false });
    else pieces.push({ text: item.content.map((part) => part.text).join('\n'), cacheBreakpoint: item.content.some((part) => part.prompt_cache_breakpoint) });
  });
  return pieces;
}

/** The instructions as one text. */
export function instructionsText(pieces: readonly InstructionPiece[]): string {
  return pieces.map((piece) => piece.text).join('\n\n');
}

function isInstruction(item: WireItem): item is InstructionMessage {
  return item.type === 'message' && (item.role === 'system' || item.role === 'developer');
}

/** An assistant message's texts, a refusal read as what the model said. */
export function assistantTexts(message: AssistantMessage): string[] {
  return typeof message.content === 'string' ? [message.content] : message.content.map((part) => (part.type === 'output_text' ? part.text : part.refusal));
}
