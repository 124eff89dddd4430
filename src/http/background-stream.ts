import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, invalidRequest } from '../errors/gateway-error.ts';
import { isFinished } from '../engine/background-runner.ts';
import { eventsExpired, isTerminalEvent, type ResponseEventLog } from '../store/response-event-log.ts';
import type { ResponseStore, StoredResponse } from '../store/response-store.ts';
import { SseWriter, type StreamPacing, type StreamWatcher } from './sse-writer.ts';

export interface BackgroundStreamSource {
  events: ResponseEventLog;
  store: ResponseStore;
  pacing: StreamPacing;
  /** Told of every stream opened and closed (metrics). */
  streams?: StreamWatcher | null;
  /**
   * Aborted when this replica starts shutting down, where other replicas
   * serve the same streams (a shared store): readers are then told to resume
   * there at once, rather than held through the drain and cut.
   */
  shutdown?: AbortSignal;
}

/**
 * Streams a background response's events as SSE from the event log: those
 * after `after` first, then the live ones until the terminal event —
 * whichever replica runs it. The reader leaving stops only the reading; the
 * response runs on. Checks first that the replay has no hole (a 400 while
 * the status line can still say so).
 */
export async function streamBackgroundEvents(request: FastifyRequest, reply: FastifyReply, source: BackgroundStreamSource, id: string, after: number, tenant: string = request.tenant): Promise<void> {
  const { events, store } = source;
  await events.checkReplayable(tenant, id, after);
  const controller = new AbortController();
  reply.raw.once('close', () => controller.abort());
  const leaving = source.shutdown;
  const onShutdown = () => controller.abort();
  leaving?.addEventListener('abort', onShutdown, { once: true });
  reply.hijack();
  const writer = new SseWriter(reply.raw, reply.getHeaders() as Record<string, string>, source.pacing, source.streams);
  const stillRunning = async () => {
    const record = await store.get(tenant, id);
    return record !== null && !isFinished(record.response);
  };
  let connected = true;
  let expected = after + 1;
  let ended = false;
  try {
    for await (const batch of events.follow(tenant, id, { after, signal: controller.signal, stillRunning })) {
      for (const event of batch) {
        if (event.sequence < expected) continue;
        if (event.sequence > expected) {
          // The reader fell behind the log's bounds and the events it had yet to read are gone: a stream with a hole would
          // corrupt its view, so it ends here, saying so (no [DONE]: the response goes on without this reader).
          await writer.event('error', errorEvent(expected, { type: 'invalid_request_error', code: 'stream_events_expired', message: `Events ${expected} to ${event.sequence - 1} of response '${id}' are no longer kept (the stream was read more slowly than it was written); retrieve the response for its state.` }));
          connected = false;
          break;
        }
        expected = event.sequence + 1;
        ended = isTerminalEvent(event.type);
        // The sequence number as the SSE id: an EventSource reconnecting resumes after it (stored-responses-route.ts).
        const written = writer.event(event.type, event.json, event.sequence);
        if (written !== true && !(await written)) {
          connected = false;
          break;
        }
      }
      if (!connected) break;
    }
    if (connected && leaving?.aborted && !reply.raw.destroyed) {
      await writer.event('error', errorEvent(expected, { type: 'server_error', code: 'server_shutting_down', message: `This gateway instance is shutting down; resume the stream of response '${id}' with starting_after=${expected - 1} (another instance serves it).` }));
    } else if (connected && !controller.signal.aborted && !ended) {
      // The log ended before the response's terminal event reached this reader (its events were let go: the bounds, the
      // store letting the response go): a stream cut short without saying so would pass for whole.
      await writer.event('error', errorEvent(expected, { type: 'invalid_request_error', code: 'stream_events_expired', message: `The events of response '${id}' from ${expected} on are no longer kept; retrieve the response for its state.` }));
    } else if (connected && !controller.signal.aborted) await writer.write('data: [DONE]\n\n');
  } catch (error) {
    // Headers are out: the stream ends saying why, and the client resumes from its last sequence number (or retrieves the response).
    request.log.error({ err: error, response_id: id }, 'background event stream failed');
    if (connected && !controller.signal.aborted) {
      const failure = error instanceof GatewayError ? error : null;
      await writer.event('error', errorEvent(expected, { type: failure?.type ?? 'server_error', code: failure?.code ?? 'server_error', message: `The stream of response '${id}' broke off: ${failure?.message ?? 'the event log could not be read'}. Resume it with starting_after=${expected - 1}, or retrieve the response.` }));
    }
  } finally {
    leaving?.removeEventListener('abort', onShutdown);
    controller.abort();
    writer.end();
  }
}

/**
 * A stored response's resumable stream (`GET /v1/responses/{id}?stream=true`,
 * and the inspector's view of it): a 400 while the status line can still say
 * so when it was not a background response or its events are gone.
 */
export async function streamStoredResponse(request: FastifyRequest, reply: FastifyReply, source: BackgroundStreamSource, record: StoredResponse, after: number): Promise<void> {
  const { response, tenant } = record;
  if (!response.background) throw invalidRequest('This response cannot be streamed: it was not created with background=true. Retrieve it without stream=true.', 'stream', 'invalid_value');
  if (isFinished(response)) {
    const last = await source.events.lastEvent(tenant, response.id);
    if (!last) throw eventsExpired(response.id, null);
    // Resumed at (or past) its terminal event: nothing is missing and nothing more will come, so the stream is whole and empty
    // (a client that kept the last sequence number it read, as the SDK's retrieve with starting_after does). A log that ends
    // before the terminal event (not written, or let go) has nothing whole to give from there.
    if (after >= last.sequence) {
      if (!isTerminalEvent(last.type)) throw eventsExpired(response.id, null);
      return endEmpty(reply, source);
    }
  }
  await streamBackgroundEvents(request, reply, source, response.id, after, tenant);
}

function endEmpty(reply: FastifyReply, source: BackgroundStreamSource): void {
  reply.hijack();
  const writer = new SseWriter(reply.raw, reply.getHeaders() as Record<string, string>, source.pacing, source.streams);
  void writer.write('data: [DONE]\n\n');
  writer.end();
}

/** An `error` event: OpenResponses nests the error, OpenAI's SDKs read its fields at the top, so both are there. */
function errorEvent(sequence: number, error: { type: string; code: string; message: string }): string {
  const nested = { ...error, param: null };
  return JSON.stringify({ type: 'error', sequence_number: sequence, error: nested, code: nested.code, message: nested.message, param: null });
}
