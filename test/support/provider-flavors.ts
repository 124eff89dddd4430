import type { RecordedRequest, ScriptedChatUpstream } from './scripted-chat-upstream.ts';
import { anthropic } from './flavors/anthropic.ts';
import type { ModelTurn, ProviderFlavor } from './flavors/flavor.ts';
import { gemini } from './flavors/gemini.ts';
import { openaiChat } from './flavors/openai-chat.ts';
import { openaiResponses } from './flavors/openai-responses.ts';

export type { FlavorName, FormatSeen, JsonReply, ModelTurn, OfferedTool, ProviderFlavor, Seen, ToolChoiceSeen, TurnTokens } from './flavors/flavor.ts';
export { anthropic, gemini, openaiChat, openaiResponses };

/** Every upstream API the gateway speaks; the suites run over all of them. */
export const flavors: ProviderFlavor[] = [openaiChat, anthropic, openaiResponses, gemini];

/** Scripts `upstream` to answer each call in `flavor`'s wire format, from the tool results the model has seen so far. */
export function scriptModel(upstream: ScriptedChatUpstream, flavor: ProviderFlavor, turn: (request: RecordedRequest, results: string[]) => ModelTurn): void {
  upstream.setScript((request) => flavor.render(request, turn(request, flavor.seen(request).flatMap((seen) => (seen.kind === 'result' ? [seen.content] : [])))));
}
