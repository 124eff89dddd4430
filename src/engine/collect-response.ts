import type { ResponseResource } from '../protocol/response-resource.ts';
import type { ResponseStreamEvent } from '../protocol/stream-events.ts';

/**
 * The non-streaming transport: consumes the same event stream SSE clients get
 * and keeps what its terminal event says. Returns null when the stream stopped
 * without one (the client went away).
 */
export async function collectResponse(batches: AsyncIterable<ResponseStreamEvent[]>): Promise<ResponseResource | null> {
  let final: ResponseResource | null = null;
  for await (const batch of batches) {
    const last = batch.at(-1);
    if (last && (last.type === 'response.completed' || last.type === 'response.failed' || last.type === 'response.incomplete')) final = last.response;
  }
  return final;
}
