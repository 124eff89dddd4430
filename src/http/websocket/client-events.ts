import { GatewayError, invalidRequest } from '../../errors/gateway-error.ts';
import type { CreateResponseRequest } from '../../protocol/create-response-request.ts';
import { parseCreateResponseRequest } from '../../protocol/parse-create-response-request.ts';

/** Fields of the HTTP request body that belong to the HTTP transport (OpenResponses 2026-04-24, "WebSocket Transport"). */
const HTTP_TRANSPORT_FIELDS = ['stream', 'stream_options', 'background'] as const;

const MAX_STREAM_ID_CHARS = 128;

/** A client frame as far as it could be read: enough to answer it, and to evict what it continued when it fails. */
export interface ClientFrame {
  /** The response it continues, when it names one (read before validation, so a refused frame still evicts it). */
  previousResponseId: string | null;
  /** OpenAI's WebSocket lane: echoed on every event of the response; lanes are served one after another like everything else. */
  streamId: string | null;
}

export type ParsedFrame = ClientFrame & ({ ok: true; request: CreateResponseRequest } | { ok: false; error: GatewayError });

/**
 * Reads one client frame: a JSON text frame `{type: "response.create", …}`
 * whose other fields are the response-create body, without the HTTP
 * transport's fields. Every response on a socket streams.
 */
export function parseClientFrame(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): ParsedFrame {
  const none = { previousResponseId: null, streamId: null };
  if (isBinary) return { ...none, ok: false, error: invalidRequest('Send client events as JSON text frames, not binary frames.', null, 'invalid_type') };
  let body: unknown;
  try {
    body = JSON.parse(textOf(data));
  } catch (error) {
    return { ...none, ok: false, error: invalidRequest(`The client event is not valid JSON: ${(error as Error).message}`, null, 'invalid_json') };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { ...none, ok: false, error: invalidRequest('A client event must be a JSON object.', null, 'invalid_type') };
  }
  const { type, stream_id: streamId, ...fields } = body as Record<string, unknown>;
  const frame: ClientFrame = {
    // Only a `response.create` continues a response: another event refused (`response.steer`) is no failed continuation, and evicts nothing.
    previousResponseId: type === 'response.create' && typeof fields.previous_response_id === 'string' ? fields.previous_response_id : null,
    streamId: typeof streamId === 'string' && streamId.length <= MAX_STREAM_ID_CHARS ? streamId : null,
  };
  try {
    return { ...frame, ok: true, request: toCreateRequest(type, streamId, fields) };
  } catch (error) {
    if (error instanceof GatewayError) return { ...frame, ok: false, error };
    throw error;
  }
}

function toCreateRequest(type: unknown, streamId: unknown, fields: Record<string, unknown>): CreateResponseRequest {
  if (type !== 'response.create') {
    const what = typeof type === 'string' ? `'${type.slice(0, 64)}'` : 'an event without a string type';
    throw invalidRequest(`Unsupported client event ${what}: this gateway accepts 'response.create' events only.`, 'type', type === undefined ? 'missing_required_parameter' : 'unsupported_event_type');
  }
  if (streamId !== undefined && (typeof streamId !== 'string' || streamId.length > MAX_STREAM_ID_CHARS)) {
    throw invalidRequest(`'stream_id' must be a string of at most ${MAX_STREAM_ID_CHARS} characters.`, 'stream_id', 'invalid_value');
  }
  for (const field of HTTP_TRANSPORT_FIELDS) {
    if (field in fields && !agreesWithTheSocket(field, fields[field])) {
      throw invalidRequest(`'${field}' is a field of the HTTP transport and must not be sent over a WebSocket (every response on a socket streams; background responses use POST /v1/responses).`, field, 'unsupported_parameter');
    }
    // The OpenAI Agents SDK sends `stream: true` on every frame: a value that says what the socket does anyway is not refused.
    delete fields[field];
  }
  return { ...parseCreateResponseRequest(fields), stream: true };
}

/** `stream: true`, `background: false` and nulls describe what a socket does anyway; anything else asks for what it cannot do. */
function agreesWithTheSocket(field: (typeof HTTP_TRANSPORT_FIELDS)[number], value: unknown): boolean {
  if (value === null) return true;
  return field === 'stream' ? value === true : field === 'background' ? value === false : false;
}

function textOf(data: Buffer | ArrayBuffer | Buffer[]): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return (Buffer.isBuffer(data) ? data : Buffer.from(data)).toString('utf8');
}
