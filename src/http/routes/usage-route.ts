import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { GatewayError, invalidRequest } from '../../errors/gateway-error.ts';
import { parseRequest } from '../../protocol/parse-request.ts';
import { daysBetween, utcDay, type UsageRecord, type UsageStore } from '../../store/usage-store.ts';

/** Longest range one read covers. */
const MAX_DAYS = 366;

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'a UTC day as YYYY-MM-DD')
  .refine((text) => !Number.isNaN(Date.parse(`${text}T00:00:00Z`)) && utcDay(Date.parse(`${text}T00:00:00Z`)) === text, 'a UTC day as YYYY-MM-DD');

const UsageQuery = z.strictObject({
  start: day.optional(),
  end: day.optional(),
  tenant: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a tenant name').optional(),
});

/**
 * `GET /v1/usage?start=YYYY-MM-DD&end=YYYY-MM-DD&tenant=…` (a loopgate
 * extension): usage per UTC day, tenant and model. A key reads its own
 * tenant's; an admin key (and anyone, without API keys) every tenant's, or
 * the one named. `end` defaults to today and `start` to `end`, so
 * `?start=<first of the month>` reads the month to date; at most a year per read.
 */
export function registerUsageRoute(app: FastifyInstance, store: UsageStore): void {
  app.get('/v1/usage', async (request) => {
    const query = parseRequest(UsageQuery, request.query ?? {});
    const end = query.end ?? utcDay(Date.now());
    const start = query.start ?? end;
    if (start > end) throw invalidRequest(`'start' (${start}) is after 'end' (${end}).`, 'start');
    if (daysBetween(start, end).length > MAX_DAYS) throw invalidRequest(`The range covers more than ${MAX_DAYS} days; read it in parts.`, 'start');
    if (!request.admin && query.tenant !== undefined && query.tenant !== request.tenant) {
      throw new GatewayError({ status: 403, type: 'permission_error', code: 'permission_denied', param: 'tenant', message: "This API key may read only its own tenant's usage; admin keys (auth.apiKeys[].admin) read every tenant's." });
    }
    const tenant = request.admin ? (query.tenant ?? null) : request.tenant;
    const records = await store.read({ tenant, start, end });
    return { object: 'list', start, end, tenant, data: records.map(usageView) };
  });
}

function usageView(record: UsageRecord) {
  return {
    object: 'loopgate.usage',
    day: record.day,
    tenant: record.tenant,
    model: record.model,
    responses: record.responses,
    input_tokens: record.inputTokens,
    output_tokens: record.outputTokens,
    total_tokens: record.inputTokens + record.outputTokens,
    cached_tokens: record.cachedTokens,
    reasoning_tokens: record.reasoningTokens,
    tool_calls: record.toolCalls,
  };
}
