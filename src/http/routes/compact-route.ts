import type { FastifyInstance } from 'fastify';
import type { Compactor } from '../../engine/compaction/compactor.ts';
import { usageOf } from '../../engine/usage-total.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { UsageRecorder } from '../../engine/usage-recorder.ts';
import { CompactRequest } from '../../protocol/compact-request.ts';
import { parseRequest } from '../../protocol/parse-request.ts';
import { abortOnDisconnect } from '../abort-on-disconnect.ts';
import { safeObserver } from '../../engine/loop-observer.ts';
import type { Tracing } from '../../observability/tracing.ts';
import { traceContextOf } from '../../util/trace-context.ts';
import type { RateLimitGate } from '../rate-limits/rate-limit-gate.ts';

/** What a compaction is metered by: it is a request with a model call, though no response. */
export interface CompactMetering {
  rateLimits: RateLimitGate;
  usage: UsageRecorder;
  /** Traces the summarising call (its `chat` span, under the client's traceparent) when tracing is on. */
  tracing?: Tracing | null;
}

/** `POST /v1/responses/compact`: the compacted window as JSON (`CompactResource`); failures in the error envelope, like `POST /v1/responses`. */
export function registerCompactRoute(app: FastifyInstance, compactor: Compactor, metering: CompactMetering): void {
  app.post('/v1/responses/compact', async (request, reply) => {
    const body = parseRequest(CompactRequest, request.body);
    const signal = abortOnDisconnect(reply);
    const admission = await metering.rateLimits.admit(request.apiKeyId, { concurrent: false });
    reply.headers(admission.headers());
    try {
      const tracer = metering.tracing?.observer(traceContextOf(request.headers));
      const compacted = await compactor.compact(body, { tenant: request.tenant, signal, admit: admission.reserveTokens, ...(tracer && { observer: safeObserver([tracer]) }) });
      await admission.settle(compacted.usage.total_tokens);
      metering.usage.compacted(request.tenant, body.model, compacted.usage);
      reply.headers(admission.headers());
      return compacted;
    } catch (error) {
      // A summary that failed after the upstream answered (cut short, refused, empty) was billed all the same.
      const billed = error instanceof GatewayError ? error.billed : null;
      if (billed) {
        const usage = usageOf(billed);
        await admission.settle(usage.total_tokens);
        metering.usage.compacted(request.tenant, body.model, usage);
      } else await admission.done();
      // The refusal's line (error-handler.ts) says whose request it was and for what.
      request.log = request.log.child({ tenant: request.tenant, model: body.model });
      throw error;
    }
  });
}
