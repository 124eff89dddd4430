import type { ModelRoute } from '../providers/model-router.ts';
import type { RoutedCalls } from './observed-provider.ts';

/** A provider entry and the model name its upstream knows: what metrics, traces, logs and learned context windows are about. */
export interface CallTarget {
  provider: string;
  upstreamModel: string;
}

/**
 * Where the route's latest model call went: for a routed alias the
 * deployment that served or refused it (providers/routing/), else the
 * route's own provider, with `upstreamModel` (the route's unless the call
 * named another).
 */
export function calledTarget(route: ModelRoute, upstreamModel: string = route.upstreamModel): CallTarget {
  const called = route.calledBy?.();
  return called ? { provider: called.providerName, upstreamModel: called.upstreamModel } : { provider: route.provider.name, upstreamModel };
}

/** Everywhere the route's calls may go: each deployment of a routed alias, else the route's own provider. */
export function routeTargets(route: ModelRoute, upstreamModel: string = route.upstreamModel): CallTarget[] {
  return route.deployments?.map((deployment) => ({ provider: deployment.providerName, upstreamModel: deployment.upstreamModel })) ?? [{ provider: route.provider.name, upstreamModel }];
}

/** A routed alias's calls as the watcher of its model calls reads them; null for a route to one provider. */
export function routedCalls(route: ModelRoute): RoutedCalls | null {
  if (!route.calledBy) return null;
  const refused = route.refusedAttempts;
  return { called: () => calledTarget(route), refusedAttempts: () => refused?.() ?? [] };
}
