import type { TurnEvent } from '../provider.ts';
import { errorFromUpstreamFrame } from '../upstream-errors.ts';
import { ChatChunkTranslator, readInBandError } from './chat-chunk-translator.ts';
import type { ChatChunk, ChatCompletion } from './chat-wire.ts';
import { invalidUpstreamBody } from '../invalid-upstream-body.ts';
import { chatParamAsResponses } from './chat-param.ts';
import type { ReasoningHeard } from './reasoning-field.ts';

/**
 * Translates a non-streamed completion. Its message is one big delta, so it
 * goes through the same translator as a stream and yields the same events.
 */
export function readChatCompletion(body: unknown, provider: string, heard: ((what: ReasoningHeard) => void) | null = null): TurnEvent[] {
  if (body === null || typeof body !== 'object') throw invalidUpstreamBody(provider, 'the body is not a JSON object');
  const completion = body as ChatCompletion & ChatChunk;
  const inBandError = readInBandError(completion);
  if (inBandError) throw errorFromUpstreamFrame(provider, inBandError.code, inBandError.message, inBandError.status, inBandError.param, chatParamAsResponses);
  const choice = completion.choices?.[0];
  if (!choice) throw invalidUpstreamBody(provider, 'the completion has no choices');
  const translator = new ChatChunkTranslator(heard);
  const events: TurnEvent[] = [];
  translator.identify(completion, events);
  translator.reportTier(completion, events);
  if (choice.message) translator.acceptDelta(choice.message, events, choice.logprobs);
  translator.setFinishReason(choice.finish_reason ?? null);
  if (completion.usage) translator.setUsage(completion.usage);
  translator.finish(events);
  return events;
}
