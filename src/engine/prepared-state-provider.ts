import type { TurnRequest, TurnStream } from '../providers/provider.ts';
import { ServingFront } from './serving-front.ts';

/**
 * The model of a response asked not to generate (`generate: false`, which
 * Codex sends to warm a WebSocket up): the request's state is prepared as
 * for any response (its input stored, its MCP servers listed) and the
 * response ends at once, with no output and no upstream call, so that a
 * later request can continue it by `previous_response_id` and send only
 * what is new.
 */
export class PreparedStateProvider extends ServingFront {
  startTurn(_request: TurnRequest, _signal: AbortSignal): Promise<TurnStream> {
    return Promise.resolve([
      { type: 'usage', usage: { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0 } },
      { type: 'finish', finish: { reason: 'stop', raw: null } },
    ]);
  }
}
