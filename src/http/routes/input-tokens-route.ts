import type { FastifyInstance } from 'fastify';
import type { InputTokenCounter } from '../../engine/count-input-tokens.ts';
import { InputTokenCountRequest } from '../../protocol/input-token-count-request.ts';
import { parseRequest } from '../../protocol/parse-request.ts';
import { abortOnDisconnect } from '../abort-on-disconnect.ts';

/**
 * `POST /v1/responses/input_tokens` (openai-node's `responses.inputTokens.count`):
 * `{object: "response.input_tokens", input_tokens}`, plus the extension field
 * `loopgate:counted_by` — `provider` when the upstream counted, `estimate`
 * when the gateway did (README: "Counting input tokens").
 */
export function registerInputTokensRoute(app: FastifyInstance, counter: InputTokenCounter): void {
  app.post('/v1/responses/input_tokens', async (request, reply) => {
    // openai-node sends no body for `count()` without parameters: that is an empty request, not a malformed one.
    const body = parseRequest(InputTokenCountRequest, request.body ?? {});
    const counted = await counter.count(body, { tenant: request.tenant, signal: abortOnDisconnect(reply) });
    return { object: 'response.input_tokens', input_tokens: counted.inputTokens, 'loopgate:counted_by': counted.countedBy };
  });
}
