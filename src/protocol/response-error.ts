import type { ResponseResource } from './response-resource.ts';

/**
 * A failed response's `error`: the code and message OpenResponses defines,
 * and the error's `type`, as in an error envelope. The AI SDK requires a
 * `type` of a failed JSON response's error: without one it reads the whole
 * answer as invalid JSON, and the client never learns what failed.
 */
export function responseError(code: string, message: string, type: string = typeOfCode(code)): NonNullable<ResponseResource['error']> {
  return { code, message, type };
}

function typeOfCode(code: string): string {
  if (code === 'rate_limit_exceeded') return 'rate_limit_error';
  if (code === 'context_length_exceeded') return 'invalid_request_error';
  if (code.startsWith('upstream_')) return 'upstream_error';
  return 'server_error';
}
