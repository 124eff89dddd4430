import type { ResponseResource } from '../protocol/response-resource.ts';
import type { ResponseStreamEvent } from '../protocol/stream-events.ts';

/**
 * The non-streaming transport: consumes the same event stream SSE clients get
 * and keeps what its terminal event says. Returns null when the stream stopped
 * without one (the client went away).
 */
export async function collectResponse(events: AsyncIterable<ResponseStreamEvent>): Promise<ResponseResource | null> {
  let final: ResponseResource | null = null;
  for await (const event of events) {
    if (event.type === 'response.completed' || event.type === 'response.failed' || event.type === 'response.incomplete') final = event.response;
  }
  return final;
}
