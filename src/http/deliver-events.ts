import type { ResponseResource } from '../protocol/response-resource.ts';
import type { ResponseStreamEvent } from '../protocol/stream-events.ts';

/** Sends one event: true when taken at once, else a promise of whether the peer is still there. */
export type SendEvent = (event: ResponseStreamEvent) => boolean | Promise<boolean>;

/**
 * Hands a response's event batches to a streaming transport (SSE, a
 * WebSocket) and returns its final response. A peer that leaves stops the
 * sending, not the stream: the loop (already cancelled by the disconnect)
 * still runs to its terminal event, so the response is stored as
 * `cancelled` and logged. `delivered` says whether the peer got everything.
 */
export async function deliverEvents(batches: AsyncIterable<ResponseStreamEvent[]>, send: SendEvent, firstByte?: () => void): Promise<{ final: ResponseResource | null; delivered: boolean }> {
  let final: ResponseResource | null = null;
  let delivered = true;
  for await (const batch of batches) {
    const last = batch.at(-1);
    if (last && (last.type === 'response.completed' || last.type === 'response.failed' || last.type === 'response.incomplete')) final = last.response;
    if (!delivered) continue;
    firstByte?.();
    for (const event of batch) {
      // Most sends are taken at once; only a full socket makes the stream wait.
      const sent = send(event);
      if (sent !== true && !(await sent)) {
        delivered = false;
        break;
      }
    }
  }
  return { final, delivered };
}
