/** The API resources this gateway serves under /v1, as a client's path would name them. */
const RESOURCES = /^\/(responses|conversations|models)(\/|$)/;
/** OpenAI endpoints other clients speak, which this gateway does not. */
const OTHER_APIS = /^\/(?:v1\/)?(chat\/completions|completions|embeddings)(\/|$)/;

/**
 * What a request that reached no route most likely meant, said in its 404:
 * the usual misconfigurations are a base URL without `/v1`, one with a
 * trailing slash the client keeps, and a Chat Completions client pointed at
 * a Responses gateway. Empty when nothing fits.
 */
export function routeHint(path: string): string {
  const other = OTHER_APIS.exec(path);
  if (other) return ` This gateway serves OpenAI's Responses API (POST /v1/responses), not /v1/${other[1]}: use a client or SDK call that speaks Responses.`;
  if (RESOURCES.test(path)) return ` The API is under /v1: end the client's base URL with /v1 (here, /v1${path}).`;
  if (path.startsWith('/v1/') && path.endsWith('/') && RESOURCES.test(path.slice('/v1'.length))) return ` Leave out the trailing slash (${path.slice(0, -1)}).`;
  return '';
}
