import { isUtf8 } from 'node:buffer';
import type { FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import { GatewayError } from '../errors/gateway-error.ts';

const POISON_CHECKS = { protoAction: 'error', constructorAction: 'error' } as const;

/**
 * The `application/json` body parser (read as a string): JSON parsed as
 * Fastify's own parser does (keys that would reach an object's prototype are
 * refused), but whose refusal says what is wrong: the parser's position of a
 * syntax error, or the key it will not take. An empty body is no body
 * (clients send the header on GET and DELETE too); routes that need one say so.
 */
export function parseJsonBody(request: FastifyRequest, bytes: string | Buffer, done: (error: Error | null, body?: unknown) => void): void {
  let body: unknown;
  try {
    body = parse(textOf(request, bytes as Buffer));
  } catch (error) {
    return done(error as Error, undefined);
  }
  done(null, body);
}

/** JSON's one encoding, UTF-8 (RFC 8259): text in another, or bytes that are none, would reach the model with its characters replaced. */
function textOf(request: FastifyRequest, bytes: Buffer): string {
  const type = request.headers['content-type'];
  // The SDKs send a bare `application/json`: a charset is looked for only where there are parameters.
  const charset = type !== undefined && type.length > BARE_JSON_TYPE.length ? CHARSET.exec(type)?.[1] : undefined;
  if (charset !== undefined && !UTF8.test(charset)) {
    throw new GatewayError({ status: 415, type: 'invalid_request_error', code: 'unsupported_media_type', message: `Send the request body as UTF-8 JSON (charset=${charset} is not read).` });
  }
  if (!isUtf8(bytes)) throw invalidJson('The request body is not valid UTF-8, which JSON must be.');
  return bytes.toString('utf8');
}

const BARE_JSON_TYPE = 'application/json';
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)/i;
const UTF8 = /^utf-?8$/i;

function parse(text: string): unknown {
  if (text === '') return undefined;
  try {
    return secureJson.parse(text, undefined, POISON_CHECKS);
  } catch {
    throw refusal(text);
  }
}

/** Only on the way out: parsed again without the checks, the text tells a syntax error from a refused key. */
function refusal(text: string): GatewayError {
  try {
    JSON.parse(text);
  } catch (syntaxError) {
    return invalidJson(`The request body is not valid JSON: ${(syntaxError as Error).message}.`);
  }
  return invalidJson("The request body holds a key that could reach an object's prototype ('__proto__', or 'constructor' holding 'prototype'); such bodies are refused.");
}

function invalidJson(message: string): GatewayError {
  return new GatewayError({ status: 400, type: 'invalid_request_error', code: 'invalid_json', message });
}
