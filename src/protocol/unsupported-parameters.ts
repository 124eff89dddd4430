import { invalidRequest } from '../errors/gateway-error.ts';

/**
 * Request parameters OpenAI defines that this gateway does not serve yet.
 * Each is a 400 naming it when set (null counts as unset), so a client never
 * believes it was honoured.
 */
export const UNSUPPORTED_PARAMETERS = [
  { name: 'prompt', why: 'Stored prompt templates are not supported: send instructions and input instead.' },
  { name: 'context_management', why: 'Server-side context management is not supported yet.' },
  { name: 'moderation', why: 'Moderation settings are not supported.' },
  { name: 'image', why: 'Image generation settings are not supported.' },
  { name: 'access_programs', why: 'Programmatic tool calling is not supported.' },
] as const;

export function refuseUnsupportedParameters(request: Record<string, unknown>): void {
  for (const { name, why } of UNSUPPORTED_PARAMETERS) {
    if (request[name] !== undefined && request[name] !== null) throw invalidRequest(`'${name}' is not supported by this gateway. ${why}`, name, 'unsupported_parameter');
  }
  // Warming the upstream's prompt cache needs a model call that answers nothing: none is made for it.
  const cacheOptions = request.prompt_cache_options as { prewarm?: unknown } | null | undefined;
  if (cacheOptions?.prewarm === true) {
    throw invalidRequest("'prompt_cache_options.prewarm' is not supported by this gateway: it would prepare the cache without generating output.", 'prompt_cache_options.prewarm', 'unsupported_parameter');
  }
}
