import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { invalidRequest, notFound } from '../../errors/gateway-error.ts';
import { Includable } from '../../protocol/includable.ts';
import { parseRequest } from '../../protocol/parse-request.ts';
import type { ResponseStore } from '../../store/response-store.ts';
import { isFinished, type BackgroundRunner } from '../../engine/background-runner.ts';
import { streamStoredResponse, type BackgroundStreamSource } from '../background-stream.ts';
import { inputItemView } from '../input-item-view.ts';
import { gatherInclude } from './include-query.ts';
import { queryInteger } from './query-integer.ts';

/** Accepted and ignored: stored responses and their items are shown whole. */
const Include = z.array(Includable).optional();

const RetrieveQuery = z.object({
  include: Include,
  stream: z.enum(['true', 'false']).optional(),
  starting_after: queryInteger(0),
  include_obfuscation: z.enum(['true', 'false']).optional(),
});

const ListQuery = z.object({
  after: z.string().min(1).optional(),
  before: z.string().min(1).optional(),
  limit: queryInteger(1, 100).transform((limit) => limit ?? 20),
  order: z.enum(['asc', 'desc']).default('desc'),
  include: Include,
});

/** Missing and foreign ids answer alike, so ids of other tenants cannot be probed. */
function responseNotFound(id: string) {
  return notFound(`Response with id '${id}' not found.`, 'response_not_found');
}

export interface BackgroundRoutesOptions extends BackgroundStreamSource {
  runner: BackgroundRunner;
  cancelWaitMs: number;
}

/**
 * `GET` (JSON, or with `stream=true` a background response's events from
 * `starting_after` on) and `DELETE /v1/responses/{id}`,
 * `POST /v1/responses/{id}/cancel`, and `GET /v1/responses/{id}/input_items`.
 */
export function registerStoredResponsesRoutes(app: FastifyInstance, store: ResponseStore, background: BackgroundRoutesOptions): void {
  app.get<{ Params: { id: string } }>('/v1/responses/:id', async (request, reply) => {
    const query = parseRequest(RetrieveQuery, gatherInclude(request.query));
    const record = await store.get(request.tenant, request.params.id);
    if (!record) throw responseNotFound(request.params.id);
    if (query.stream !== 'true') {
      if (query.starting_after !== undefined) throw invalidRequest("'starting_after' applies only with stream=true.", 'starting_after', 'invalid_value');
      return record.response;
    }
    // A browser's EventSource cannot change its URL: reconnecting, it sends the last event's id (its sequence number),
    // which is later than the URL's own starting_after once it has read past it.
    const lastEventId = lastEventIdOf(request.headers['last-event-id']);
    const resumeAfter = lastEventId !== null && lastEventId > (query.starting_after ?? -1) ? lastEventId : null;
    // It reconnects whenever a stream ends; once a finished response has nothing more, 204 is how it is told to stop.
    if (resumeAfter !== null && isFinished(record.response) && resumeAfter >= (await background.events.lastSequence(record.tenant, record.response.id))) return reply.code(204).send();
    await streamStoredResponse(request, reply, background, record, resumeAfter ?? query.starting_after ?? -1);
    return reply;
  });

  app.post<{ Params: { id: string } }>('/v1/responses/:id/cancel', async (request) => {
    const record = await background.runner.cancel({ tenant: request.tenant, id: request.params.id }, background.cancelWaitMs);
    if (!record) throw responseNotFound(request.params.id);
    return record.response;
  });

  app.delete<{ Params: { id: string } }>('/v1/responses/:id', async (request) => {
    await background.runner.stopBeforeDelete({ tenant: request.tenant, id: request.params.id }, background.cancelWaitMs);
    const deleted = await store.delete(request.tenant, request.params.id);
    if (!deleted) throw responseNotFound(request.params.id);
    // A background response's kept events hold its whole answer: deleted with it, not left until their TTL.
    await background.events.delete(request.tenant, request.params.id);
    return { id: request.params.id, object: 'response.deleted', deleted: true };
  });

  app.get<{ Params: { id: string } }>('/v1/responses/:id/input_items', async (request) => {
    const query = parseRequest(ListQuery, gatherInclude(request.query));
    const record = await store.get(request.tenant, request.params.id);
    if (!record) throw responseNotFound(request.params.id);
    const ordered = query.order === 'asc' ? record.inputItems : [...record.inputItems].reverse();
    let start = 0;
    let end = ordered.length;
    if (query.after !== undefined) {
      const index = ordered.findIndex((item) => item.id === query.after);
      if (index < 0) throw notFound(`Item with id '${query.after}' not found in this response's input.`, 'item_not_found', 'after');
      start = index + 1;
    }
    if (query.before !== undefined) {
      const index = ordered.findIndex((item) => item.id === query.before);
      if (index < 0) throw notFound(`Item with id '${query.before}' not found in this response's input.`, 'item_not_found', 'before');
      end = index;
    }
    const window = ordered.slice(start, Math.max(start, end));
    const page = window.slice(0, query.limit).map(inputItemView);
    return {
      object: 'list',
      data: page,
      first_id: (page[0]?.id as string | undefined) ?? null,
      last_id: (page.at(-1)?.id as string | undefined) ?? null,
      has_more: window.length > page.length,
    };
  });
}

/** `Last-Event-ID` as a sequence number; null when absent or not one (a stream the gateway gave no ids). */
function lastEventIdOf(header: string | string[] | undefined): number | null {
  if (typeof header !== 'string' || !/^\d{1,15}$/.test(header)) return null;
  return Number(header);
}
