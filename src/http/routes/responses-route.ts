import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { collectResponse } from '../../engine/collect-response.ts';
import { loggingObserver } from '../../engine/loop-observer.ts';
import type { ResponseEngine } from '../../engine/response-engine.ts';
import { CreateResponseRequest } from '../../protocol/create-response-request.ts';
import { parseRequest } from '../../protocol/parse-request.ts';
import type { ResponseStreamEvent } from '../../protocol/stream-events.ts';
import { SseWriter } from '../sse-writer.ts';

export interface ResponsesRouteOptions {
  engine: ResponseEngine;
  keepAliveIntervalMs: number;
}

/** `POST /v1/responses`: one engine call, then SSE or JSON from the same event stream. */
export function registerResponsesRoute(app: FastifyInstance, options: ResponsesRouteOptions): void {
  app.post('/v1/responses', async (request, reply) => {
    const body = parseRequest(CreateResponseRequest, request.body);
    const signal = abortOnDisconnect(reply);
    // Throws before anything is sent when the upstream fails at once: the client gets a real status.
    // Building log objects costs even when they are dropped: observe only when info lines are kept.
    const log = request.log as typeof request.log & { isLevelEnabled?(level: string): boolean };
    const observers = log.isLevelEnabled?.('info') ? [loggingObserver(log)] : [];
    const run = await options.engine.createResponse(body, { tenant: request.tenant, signal, observers });
    if (body.stream) {
      await streamEvents(request, reply, run.events, options.keepAliveIntervalMs);
      return reply;
    }
    const response = await collectResponse(run.events);
    if (!response) return reply; // the client is gone; nothing to send
    return reply.send(response);
  });
}

function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}

async function streamEvents(request: FastifyRequest, reply: FastifyReply, batches: AsyncGenerator<ResponseStreamEvent[]>, keepAliveMs: number): Promise<void> {
  reply.hijack();
  const writer = new SseWriter(reply.raw, reply.getHeaders() as Record<string, string>, keepAliveMs);
  try {
    for await (const batch of batches) {
      for (const event of batch) {
        // Most writes are taken at once; only a full socket makes the stream wait.
        const written = writer.event(event.type, JSON.stringify(event));
        if (written !== true && !(await written)) return;
      }
    }
    await writer.write('data: [DONE]\n\n');
  } catch (error) {
    // Headers are out; the stream is all that is left to end.
    request.log.error({ err: error }, 'event stream failed');
  } finally {
    writer.end();
  }
}
