import { GatewayError } from '../errors/gateway-error.ts';
import type { ResponseStreamEvent, ResponseStreamEventBody, TerminalEventType } from '../protocol/stream-events.ts';
import type { OutputBuilder } from './output-builder.ts';
import type { ResponseEventHooks } from './response-loop.ts';
import type { UsageTotal } from './usage-total.ts';
import type { ResponseResource } from '../protocol/response-resource.ts';
import { forgetResponseJson } from '../protocol/response-json.ts';
import { responseError } from '../protocol/response-error.ts';

/** How a response ended, before it is written into the response object. */
export type Ending =
  | { status: 'completed' | 'requires_action' | 'cancelled' }
  | { status: 'incomplete'; reason: string }
  /** `type` as the error's own (a refusal's `rate_limit_error`), else read from the code. */
  | { status: 'failed'; code: string; message: string; type?: string };

export interface Finishing {
  response: ResponseResource;
  pausedStatus: 'requires_action' | 'completed';
  hooks: ResponseEventHooks;
  /** The client went away: nobody to answer with an HTTP error (a response the gateway stopped, at shutdown say, still has its client). */
  clientGone: boolean;
  /** Whether tools ran on the server side (the gateway's, or hosted ones the upstream ran): what a retry of the request would repeat. */
  toolsRan: boolean;
}

/**
 * Writes the ending into the response, lets the hooks store it, and stamps
 * the one terminal event, returned with whatever was still pending (a plain
 * async function: the loop yields it, with no generator of its own between);
 * a hook failure turns it into `response.failed` (or propagates, for JSON
 * requests that can still answer with an HTTP error).
 */
export async function finishResponse(
  loop: Finishing,
  builder: OutputBuilder,
  usage: UsageTotal,
  ending: Ending,
  stamp: (body: ResponseStreamEventBody) => ResponseStreamEvent[],
): Promise<ResponseStreamEvent[]> {
  const { response } = loop;
  response.output = builder.output;
  response.usage = usage.toUsage();
  let terminal: TerminalEventType;
  switch (ending.status) {
    case 'completed':
    case 'requires_action':
      response.status = ending.status === 'requires_action' ? loop.pausedStatus : 'completed';
      response.completed_at = Math.floor(Date.now() / 1000);
      terminal = 'response.completed';
      break;
    case 'cancelled':
      response.status = 'cancelled';
      response.incomplete_details = { reason: 'cancelled' };
      terminal = 'response.incomplete';
      break;
    case 'incomplete':
      response.status = 'incomplete';
      response.incomplete_details = { reason: ending.reason };
      terminal = 'response.incomplete';
      break;
    case 'failed':
      response.status = 'failed';
      response.error = responseError(ending.code, ending.message, ending.type);
      terminal = 'response.failed';
      break;
  }
  try {
    await loop.hooks.beforeTerminal(response);
  } catch (error) {
    if (loop.hooks.onHookFailure === 'throw' && !loop.clientGone) throw loop.toolsRan ? notToRetry(error) : error;
    terminal = 'response.failed';
    // It may have been stored (and serialized) before a later hook failed: the JSON made of it then no longer says what it is.
    forgetResponseJson(response);
    response.status = 'failed';
    response.completed_at = null;
    response.incomplete_details = null;
    response.error = error instanceof GatewayError ? responseError(error.code ?? 'server_error', error.message, error.type) : responseError('server_error', 'The response could not be finished.');
  }
  return stamp({ type: terminal, response });
}

/**
 * A response that could not be kept after its tools ran (the store refused
 * the final write) is still an HTTP error for a JSON client, but not one to
 * retry: the SDKs would send the request again on a 503 and run its tools a
 * second time (`x-should-retry: false`, which the OpenAI SDKs read first).
 */
function notToRetry(error: unknown): unknown {
  if (!(error instanceof GatewayError)) return error;
  const { 'retry-after': _after, 'retry-after-ms': _afterMs, ...headers } = error.headers;
  return new GatewayError({
    status: error.status,
    type: error.type,
    code: error.code,
    param: error.param,
    message: `${error.message} Its tool calls had already run: sending the request again runs them again.`,
    headers: { ...headers, 'x-should-retry': 'false' },
    cause: error,
  });
}
