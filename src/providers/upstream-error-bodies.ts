/**
 * Reading an upstream's error body, whichever dialect it speaks: OpenAI's
 * `{"error": {message, type, code, param}}`, Google's array of it,
 * Cloudflare's `errors` list, FastAPI's `detail`, LiteLLM's Python `None`s,
 * bare strings, an HTML page from a proxy in front. What it says becomes a
 * message, a kind and a code a client can act on; how the gateway answers
 * it is `upstream-errors.ts`'s.
 */

const MAX_MESSAGE = 2_000;

interface UpstreamErrorFields {
  message?: unknown;
  type?: unknown;
  code?: unknown;
  param?: unknown;
  status?: unknown;
  failed_generation?: unknown;
}

interface UpstreamErrorBody {
  error?: UpstreamErrorFields | UpstreamErrorFields[] | string;
  errors?: UpstreamErrorFields[];
  type?: unknown;
  message?: unknown;
  detail?: unknown;
}

/** What an upstream's error body says, each part null where it says nothing usable. */
export function parseErrorBody(text: string): { message: string | null; type: string | null; code: string | null; param: string | null } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { message: plainTextMessage(text), type: null, code: null, param: null };
  }
  // Google's front ends (Gemini's OpenAI compatibility among them) answer with a one-element array of the error.
  const body = (Array.isArray(parsed) ? parsed[0] : parsed) as UpstreamErrorBody | null;
  // Cloudflare's API envelope: `{"success": false, "errors": [{code, message}]}` (or the list under `error`).
  const listed = Array.isArray(body?.error) ? body.error[0] : Array.isArray(body?.errors) ? body.errors[0] : undefined;
  const error = listed !== undefined ? listed : body?.error;
  if (error && typeof error === 'object' && !Array.isArray(error)) {
    const message = typeof error.message === 'string' ? error.message : null;
    return {
      message: message === null ? null : truncate(withFailedGeneration(message, error.failed_generation)),
      type: kindOf(error.type),
      code: errorWord(error),
      param: said(error.param),
    };
  }
  const message = typeof error === 'string' ? error : typeof body?.message === 'string' ? body.message : typeof body?.detail === 'string' ? body.detail : validationMessage(body);
  return { message: message ? truncate(message) : null, type: kindOf(body?.type), code: null, param: null };
}

/**
 * A FastAPI / pydantic refusal (`{"detail": [{loc, msg}]}`; Mistral nests it
 * in `message`, or gives the list as `message`): each field it names, with
 * why — "prompt_cache_key: Extra inputs are not permitted".
 */
function validationMessage(body: UpstreamErrorBody | null): string | null {
  const nested = body?.message;
  const detail = Array.isArray(body?.detail) ? body.detail : Array.isArray(nested) ? nested : nested !== null && typeof nested === 'object' && Array.isArray((nested as { detail?: unknown }).detail) ? (nested as { detail: unknown[] }).detail : null;
  if (!detail) return null;
  const said = detail.flatMap((entry) => {
    if (entry === null || typeof entry !== 'object') return [];
    const { loc, msg } = entry as { loc?: unknown; msg?: unknown };
    if (typeof msg !== 'string') return [];
    const field = Array.isArray(loc) ? loc.filter((part) => part !== 'body').join('.') : '';
    return [field ? `${field}: ${msg}` : msg];
  });
  return said.length > 0 ? said.slice(0, 5).join('; ') : null;
}

/** A field's value, unless it is a Python `None` or a `null` turned into text (LiteLLM's `"type": "None"`, `"param": "None"`). */
function said(value: unknown): string | null {
  return typeof value === 'string' && value !== '' && value !== 'None' && value !== 'null' ? value : null;
}

/** An error's `type` when it is one of the snake_case kinds clients branch on; a server's class name (vLLM's `BadRequestError`) is none. */
function kindOf(value: unknown): string | null {
  const type = said(value);
  return type !== null && /^[a-z]+(?:_[a-z]+)*$/.test(type) ? type : null;
}

/** A body that is not JSON, as a message: an HTML error page (nginx, a load balancer) by its title or first heading, other text as it came. */
function plainTextMessage(text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  if (/^(?:\s|<!--[\s\S]*?-->)*<(?:!doctype|html|head|body)\b/i.test(trimmed)) {
    const heading = [/<title[^>]*>([^<]*)<\/title>/i, /<h1[^>]*>([^<]*)<\/h1>/i].map((pattern) => decodeEntities(pattern.exec(trimmed)?.[1] ?? '').trim()).find(Boolean);
    return heading ? `${truncate(heading)} (an HTML error page)` : 'an HTML error page';
  }
  return truncate(trimmed);
}

const NAMED_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, entity: string) => {
    if (entity[0] !== '#') return NAMED_ENTITIES[entity.toLowerCase()] ?? whole;
    const code = entity[1] === 'x' || entity[1] === 'X' ? Number.parseInt(entity.slice(2), 16) : Number(entity.slice(1));
    return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

/**
 * The word an error body names its error by: its `code`, or Google's
 * `status` ("INVALID_ARGUMENT", lower-cased); never an HTTP status number,
 * which servers that put one in `code` (llama.cpp, vLLM, OpenRouter,
 * Google) mean as the status, not as a code a client could act on.
 */
export function errorWord(error: { code?: unknown; status?: unknown }): string | null {
  if (typeof error.code === 'string' && error.code !== '' && !/^\d+$/.test(error.code)) return error.code;
  if (typeof error.status === 'string' && /^[A-Z_]+$/.test(error.status)) return error.status.toLowerCase();
  return null;
}

/** The HTTP status an error body states (`status_code`, or a number in `code`), when it is one. */
export function statedStatus(error: { code?: unknown; status_code?: unknown }): number | null {
  for (const value of [error.status_code, error.code]) {
    const status = typeof value === 'number' ? value : typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : NaN;
    if (Number.isInteger(status) && status >= 400 && status <= 599) return status;
  }
  return null;
}

/** Groq's refusal of a malformed tool call says to see `failed_generation`, the model's own output: it is the client's to see. */
export function withFailedGeneration(message: string, failedGeneration: unknown): string {
  return typeof failedGeneration === 'string' && failedGeneration !== '' ? `${message}\nfailed_generation: ${failedGeneration}` : message;
}

/** A message cut to the length a client is shown. */
export function truncate(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}
