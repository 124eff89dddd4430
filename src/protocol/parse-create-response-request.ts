import { CreateResponseRequest, SAMPLING_RANGES } from './create-response-request.ts';
import { parseRequest } from './parse-request.ts';
import { REQUEST_LIMITS } from './request-limits.ts';

type Check = (value: unknown) => boolean;

const id: Check = (value) => value === null || (typeof value === 'string' && value.length <= REQUEST_LIMITS.maxIdChars);
const text: Check = (value) => value === null || (typeof value === 'string' && value.length <= REQUEST_LIMITS.maxTextChars);
const flag: Check = (value) => value === null || typeof value === 'boolean';
const within =
  ([min, max]: readonly [number, number]): Check =>
  (value) =>
    value === null || (typeof value === 'number' && value >= min && value <= max);

/**
 * The fields of the common request that take a plain value, each with the
 * very check its schema makes, in the schema's order (zod writes its output
 * in that order, and so does the fast path).
 */
const PLAIN_FIELDS: ReadonlyMap<string, Check> = new Map([
  ['model', (value) => value === null || (typeof value === 'string' && value.length >= 1 && value.length <= REQUEST_LIMITS.maxIdChars)],
  ['input', text],
  ['previous_response_id', id],
  ['temperature', within(SAMPLING_RANGES.temperature)],
  ['top_p', within(SAMPLING_RANGES.top_p)],
  ['presence_penalty', within(SAMPLING_RANGES.presence_penalty)],
  ['frequency_penalty', within(SAMPLING_RANGES.frequency_penalty)],
  ['parallel_tool_calls', flag],
  ['stream', flag],
  ['background', flag],
  ['instructions', text],
  ['store', flag],
]);

/**
 * A `POST /v1/responses` body, validated. Most requests are a model, a
 * string input and a flag or two: such a body is checked field by field
 * against the same bounds as the schema, without walking the schema's ~40
 * optional keys (zod's parse was the largest allocation of the request
 * edge). Anything else — an array input, tools, an unknown key, a value the
 * fast check does not accept — goes through the schema, which gives the
 * same result for what the fast check accepts and the only errors.
 */
export function parseCreateResponseRequest(body: unknown): CreateResponseRequest {
  return plainRequest(body) ?? parseRequest(CreateResponseRequest, body);
}

function plainRequest(body: unknown): CreateResponseRequest | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const fields = body as Record<string, unknown>;
  const keys = Object.keys(fields);
  for (const key of keys) {
    const check = PLAIN_FIELDS.get(key);
    if (!check || !check(fields[key])) return null;
  }
  const request: Record<string, unknown> = {};
  for (const key of PLAIN_FIELDS.keys()) if (Object.hasOwn(fields, key)) request[key] = fields[key];
  return request as CreateResponseRequest;
}
