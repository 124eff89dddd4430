/** An upstream answer the gateway could not read (malformed JSON, a body of the wrong shape): the upstream's fault, a 502. */
import { GatewayError } from '../errors/gateway-error.ts';

export function invalidUpstreamBody(provider: string, cause: unknown, message = `The upstream '${provider}' sent a response the gateway could not read.`): GatewayError {
  return new GatewayError({
    status: 502,
    type: 'upstream_error',
    code: 'upstream_invalid_response',
    message,
    cause,
  });
}
