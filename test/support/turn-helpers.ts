import { ExecutorRegistry } from '../../src/executors/executor-registry.ts';
import { ToolErrorSanitizer } from '../../src/executors/sanitize-tool-error.ts';
import { initialResponse } from '../../src/engine/initial-response.ts';
import { safeObserver } from '../../src/engine/loop-observer.ts';
import { runResponseLoop } from '../../src/engine/response-loop.ts';
import { controlsOff, resolveLoopControls } from '../../src/engine/controls/loop-controls.ts';
import { ResponseDeadline } from '../../src/engine/response-deadline.ts';
import type { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import type { Provider, TurnEvent, TurnRequest, TurnStream } from '../../src/providers/provider.ts';
import { startChatStream } from '../../src/providers/openai-chat/chat-stream.ts';
import { readSseFrameBatches } from '../../src/providers/sse-frames.ts';

/** Yields `text` as UTF-8 bytes in pieces of `size`, as a socket might. */
export async function* bytesInPieces(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text, 'utf8');
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

export async function turnEventsOf(text: string, pieceSize = 17): Promise<TurnEvent[]> {
  const turn = await startChatStream(readSseFrameBatches(bytesInPieces(text, pieceSize)), 'scripted', new AbortController().signal);
  const events: TurnEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

/** Runs one upstream stream through the whole engine event pipeline (one turn, no executors). */
export async function responseEventsOf(text: string, request: CreateResponseRequest = { model: 'm' }): Promise<any[]> {
  const signal = new AbortController().signal;
  const turn = await startChatStream(readSseFrameBatches(bytesInPieces(text, 23)), 'scripted', signal);
  return collectLoopEvents(turn, request, signal);
}

export async function collectLoopEvents(firstTurn: TurnStream, request: CreateResponseRequest, signal: AbortSignal): Promise<any[]> {
  const noProvider: Provider = {
    name: 'none',
    startTurn: async () => {
      throw new Error('only one turn expected');
    },
    listModels: async () => [],
    close: async () => {},
  };
  const events: any[] = [];
  const loop = runResponseLoop({
    response: initialResponse(request, 'resp_test', 'm', 0),
    provider: noProvider,
    request: { items: [] } as unknown as TurnRequest,
    firstTurn,
    resume: null,
    terminalRan: null,
    announcements: [],
    registry: new ExecutorRegistry([]),
    toolContext: { tenant: 't', tools: [], mcpServers: [], previousOutput: [], offered: new Map() },
    policy: { allowed: null, toolChoiceNone: false, parallel: true, maxToolCalls: null },
    limits: { maxTurns: 10, toolTimeoutMs: 1_000, maxConsecutiveToolFailures: 0, pausedStatus: 'requires_action' },
    controls: resolveLoopControls(controlsOff(10), request),
    toolErrors: ToolErrorSanitizer.basic,
    signal,
    deadline: new ResponseDeadline(new AbortController().signal, 60_000),
    observer: safeObserver([]),
    hooks: { beforeTerminal: async () => {}, onHookFailure: 'fail-response' },
  });
  for await (const batch of loop) for (const event of batch) events.push(JSON.parse(JSON.stringify(event)));
  return events;
}
