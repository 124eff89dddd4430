import { initialResponse } from '../../src/engine/initial-response.ts';
import { streamResponseEvents } from '../../src/engine/response-events.ts';
import type { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import type { TurnEvent } from '../../src/providers/provider.ts';
import { startChatStream } from '../../src/providers/openai-chat/chat-stream.ts';
import { readSseFrames } from '../../src/providers/sse-frames.ts';

/** Yields `text` as UTF-8 bytes in pieces of `size`, as a socket might. */
export async function* bytesInPieces(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text, 'utf8');
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

export async function turnEventsOf(text: string, pieceSize = 17): Promise<TurnEvent[]> {
  const turn = await startChatStream(readSseFrames(bytesInPieces(text, pieceSize)), 'scripted', new AbortController().signal);
  const events: TurnEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

/** Runs an upstream stream through the whole engine event pipeline. */
export async function responseEventsOf(text: string, request: CreateResponseRequest = { model: 'm' }): Promise<any[]> {
  const signal = new AbortController().signal;
  const turn = await startChatStream(readSseFrames(bytesInPieces(text, 23)), 'scripted', signal);
  const events: any[] = [];
  const hooks = { beforeTerminal: async () => {}, onHookFailure: 'fail-response' as const };
  for await (const event of streamResponseEvents(initialResponse(request, 'resp_test', 'm', 0), turn, signal, hooks)) events.push(JSON.parse(JSON.stringify(event)));
  return events;
}
