/**
 * The paths the gateway serves on its main port (src/http/routes/): the
 * probes, the version, the API description, the API under /v1 and the
 * inspector. A metrics path on the main port must be none of them: Fastify
 * refuses a second route on a path as the app is built, with a stack trace
 * rather than a word about `metrics.path`. A test holds this list to the
 * routes the app really registers.
 */
const OWN_PATHS = new Set(['/healthz', '/readyz', '/version', '/openapi.json']);
const OWN_TREES = ['/v1', '/inspector'];

export function servedByGateway(path: string): boolean {
  return OWN_PATHS.has(path) || OWN_TREES.some((tree) => path === tree || path.startsWith(`${tree}/`));
}
