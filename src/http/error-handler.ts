import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.ts';
import { REQUEST_LIMITS } from '../protocol/request-limits.ts';
import { SecretRedactor } from '../util/secret-redactor.ts';
import { originNotAllowed, type BrowserOrigins } from './browser-origins.ts';
import { GatewayLogController } from './log-controller.ts';
import { routeHint } from './route-hints.ts';
import { loggedUrl } from './logged-url.ts';

/**
 * The one place errors become HTTP: the OpenResponses envelope
 * `{"error":{"message","type","param","code"}}` for every failure, whether
 * the gateway raised it, Fastify did (bad JSON, too large, wrong content
 * type), or a bug did (500, details only in the log).
 */
export function registerErrorHandling(app: FastifyInstance, secrets: SecretRedactor = SecretRedactor.none): void {
  app.setErrorHandler((error: FastifyError | GatewayError, request, reply) => sendError(error, request, reply, secrets));

  app.setNotFoundHandler((request, reply) => {
    // A preflight reaches here only when no page of its origin may call the gateway (else the CORS plugin answers it): that is what its developer is told.
    const origin = request.headers.origin;
    if (request.method === 'OPTIONS' && origin !== undefined && request.headers['access-control-request-method'] !== undefined) return reply.code(403).send(originNotAllowed(origin).toBody());
    return reply.code(404).send(unknownRoute(request).toBody());
  });

  // A trailing slash after a collection (`GET /v1/responses/`) reaches `/:id` (and `/v1/models/*`) routes with an empty id: no route was meant, so it is answered as none.
  app.addHook('onRoute', (route) => {
    if (!route.url.includes('/:') && !route.url.endsWith('/*')) return;
    const own = route.preValidation === undefined ? [] : [route.preValidation].flat();
    route.preValidation = [refuseEmptyParams, ...own];
  });
}

const refuseEmptyParams = async (request: FastifyRequest): Promise<void> => {
  if (Object.values(request.params as Record<string, string>).includes('')) throw unknownRoute(request);
};

function unknownRoute(request: FastifyRequest): GatewayError {
  const path = request.url.split('?')[0]!;
  return new GatewayError({ status: 404, type: 'invalid_request_error', code: 'unknown_route', message: `Unknown route: ${request.method} ${path}.${routeHint(path)}` });
}

/**
 * Fastify's `frameworkErrors`: what its router refuses before any route or
 * hook runs (a malformed percent-encoding, a path segment longer than any id)
 * answers in the envelope too, with its request id, rather than in Fastify's
 * own shape.
 */
export function frameworkErrorReplier(secrets: SecretRedactor, browsers: BrowserOrigins | null = null): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  return (error, request, reply) => {
    reply.header('x-request-id', request.id);
    // No hook runs for these, the CORS plugin's neither: a page must still be able to read the refusal.
    if (browsers?.answerOutsideHooks(request, reply)) return;
    void sendError(error, request, reply, secrets);
  };
}

function sendError(error: FastifyError | GatewayError, request: FastifyRequest, reply: FastifyReply, secrets: SecretRedactor): FastifyReply {
  const gatewayError = error instanceof GatewayError ? error : fromFrameworkError(error);
  // This is the request's one line at info (log-controller.ts), so it says which request too.
  const fields = { method: request.method, url: loggedUrl(request.url), status: gatewayError.status, code: gatewayError.code, param: gatewayError.param, duration_ms: Math.round(reply.elapsedTime) };
  // A bug is an error with its stack; a failure the gateway raised on purpose (upstream down, store away) is
  // a warning — its cause, when the operator must act, was logged at error where it is known (providers, store).
  if (!(error instanceof GatewayError) && gatewayError.status >= 500) request.log.error({ ...fields, err: error }, 'request failed');
  else if (gatewayError.status >= 500) request.log.warn(fields, gatewayError.message);
  else request.log.info(fields, gatewayError.message);
  GatewayLogController.lineWritten(request);
  // A failed request must not be retried blindly by SDKs when a retry cannot help.
  if (!gatewayError.retryable) reply.header('x-should-retry', 'false');
  // Upstream messages pass through (the client can fix its request); a credential an upstream echoed does not.
  const body = gatewayError.toBody();
  secrets.redactFields(body.error);
  return reply.code(gatewayError.status).headers(gatewayError.headers).send(body);
}

function fromFrameworkError(error: FastifyError): GatewayError {
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError({ status: 413, type: 'invalid_request_error', code: 'request_too_large', message: 'The request body is larger than this gateway accepts.' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError({ status: 415, type: 'invalid_request_error', code: 'unsupported_media_type', message: "Send the request body as JSON with 'Content-Type: application/json'." });
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError({ status: 400, type: 'invalid_request_error', code: 'invalid_json', message: 'The request body is empty; send a JSON object.' });
    case 'FST_ERR_BAD_URL':
      return new GatewayError({ status: 400, type: 'invalid_request_error', code: 'invalid_url', message: "The request's path is not a valid URL: a '%' must start the percent-encoding of UTF-8 bytes (two hex digits each)." });
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new GatewayError({ status: 400, type: 'invalid_request_error', code: 'invalid_value', message: `An id in the request's path is longer than ${REQUEST_LIMITS.maxIdChars} characters; no id is that long.` });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new GatewayError({ status: 400, type: 'invalid_request_error', code: 'invalid_json', message: `The request body is not valid JSON: ${error.message}` });
  }
  if (error instanceof SyntaxError || (status === 400 && error.code === undefined)) {
    return new GatewayError({ status: 400, type: 'invalid_request_error', code: 'invalid_json', message: `The request body is not valid JSON: ${error.message}` });
  }
  if (status >= 400 && status < 500) {
    return new GatewayError({ status, type: 'invalid_request_error', code: error.code ?? null, message: error.message });
  }
  return new GatewayError({ status: 500, type: 'server_error', code: 'internal_error', message: 'The gateway failed to process the request.', cause: error });
}
