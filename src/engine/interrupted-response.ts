import type { ResponseResource } from '../protocol/response-resource.ts';

/**
 * Cut off rather than ended: its client went away (a timeout, a dropped
 * connection; a foreground response is `cancelled` only so) or its replica
 * shut down (`incomplete`, `server_shutdown`: a rolling restart). Its client
 * got no answer, and a retry is what either calls for.
 */
export function interrupted(response: ResponseResource): boolean {
  return response.status === 'cancelled' || response.incomplete_details?.reason === 'server_shutdown';
}
