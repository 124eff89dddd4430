import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { invalidRequest, notFound } from '../../errors/gateway-error.ts';
import { parseRequest } from '../../protocol/parse-request.ts';
import type { ResponseStore, StoredResponse } from '../../store/response-store.ts';
import { streamStoredResponse, type BackgroundStreamSource } from '../background-stream.ts';
import type { InspectorViewer } from '../inspector/inspector-views.ts';
import type { RecentResponses } from '../inspector/recent-responses.ts';
import { storedTimeline } from '../inspector/stored-timeline.ts';
import { queryInteger } from './query-integer.ts';

const ListQuery = z.object({
  limit: queryInteger(1, 1_000).transform((limit) => limit ?? 50),
});

/** An admin key names the tenant of a response this replica does not remember; other keys may only name their own. */
const tenantParam = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a tenant name').optional();

const TimelineQuery = z.object({ tenant: tenantParam });

const EventsQuery = z.object({
  tenant: tenantParam,
  starting_after: queryInteger(0),
});

export interface InspectorRoutesOptions {
  recent: RecentResponses;
  store: ResponseStore;
  background: BackgroundStreamSource;
  /** Every tenant an API key belongs to: where an admin's look-up without a tenant searches. */
  tenants: readonly string[];
}

/** The page polls: its requests are logged only above info. */
const QUIET = { logLevel: 'warn' as const };

/**
 * The inspector's data, under /v1/ so every call needs an API key when keys
 * are configured: an admin key sees every tenant, any other key its own
 * (another tenant's response answers like an unknown id, 404).
 * `GET /v1/inspector/responses` lists what this replica ran lately;
 * `GET /v1/inspector/responses/{id}` is one response's timeline (watched
 * here, else rebuilt from the store); `GET /v1/inspector/responses/{id}/events`
 * is a background response's resumable stream, as `GET /v1/responses/{id}?stream=true`
 * serves it, reachable by admin keys for any tenant.
 */
export function registerInspectorRoutes(app: FastifyInstance, options: InspectorRoutesOptions): void {
  const { recent, store, background, tenants } = options;

  app.get('/v1/inspector/responses', QUIET, async (request) => {
    const query = parseRequest(ListQuery, request.query ?? {});
    return { object: 'list', data: recent.list(viewerOf(request), query.limit) };
  });

  app.get<{ Params: { id: string } }>('/v1/inspector/responses/:id', QUIET, async (request) => {
    const query = parseRequest(TimelineQuery, request.query ?? {});
    const viewer = viewerOf(request);
    const live = recent.timeline(viewer, request.params.id);
    if (live && (query.tenant === undefined || query.tenant === live.response.tenant)) return live;
    return storedTimeline(await storedFor(request, { store, recent, tenants }, query.tenant));
  });

  app.get<{ Params: { id: string } }>('/v1/inspector/responses/:id/events', QUIET, async (request, reply) => {
    const query = parseRequest(EventsQuery, request.query ?? {});
    const record = await storedFor(request, { store, recent, tenants }, query.tenant);
    if (!record.response.background) throw invalidRequest(`Response '${record.response.id}' has no event stream: only background responses keep one. Its timeline is GET /v1/inspector/responses/${record.response.id}.`, null, 'response_not_background');
    await streamStoredResponse(request, reply, background, record, query.starting_after ?? -1);
    return reply;
  });
}

function viewerOf(request: FastifyRequest): InspectorViewer {
  return { tenant: request.tenant, admin: request.admin };
}

/**
 * The stored response the viewer asks for: in the tenant it names (an admin
 * may name any), else its own; an admin naming none (the page's "open by id",
 * a response run on another replica) has every tenant searched, its own first.
 */
async function storedFor(request: FastifyRequest<{ Params: { id: string } }>, where: { store: ResponseStore; recent: RecentResponses; tenants: readonly string[] }, tenant: string | undefined): Promise<StoredResponse> {
  const viewer = viewerOf(request);
  const id = request.params.id;
  const missing = () => notFound(`Response with id '${id}' not found.`, 'response_not_found');
  if (tenant !== undefined && !viewer.admin && tenant !== viewer.tenant) throw missing();
  const first = tenant ?? where.recent.tenantOf(viewer, id) ?? viewer.tenant;
  const record = await where.store.get(first, id);
  if (record) return record;
  if (tenant === undefined && viewer.admin) {
    for (const other of where.tenants) {
      if (other === first) continue;
      const found = await where.store.get(other, id);
      if (found) return found;
    }
  }
  throw missing();
}
