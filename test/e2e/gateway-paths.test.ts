import { describe, expect, it } from 'vitest';
import { servedByGateway } from '../../src/config/gateway-paths.ts';
import { startGateway } from '../support/gateway.ts';

/**
 * The configuration refuses a metrics path on the main port that the gateway
 * serves itself (src/config/gateway-paths.ts): that list must cover every
 * route the app really registers, or a clash would pass the check and crash
 * the start.
 */
describe('the paths the configuration reserves', () => {
  it('cover every route of the app, with everything on (inspector, metrics on the main port)', async () => {
    const gateway = await startGateway('http://127.0.0.1:9/v1', { inspector: { enabled: true }, metrics: { enabled: true, path: '/internal/metrics' } });
    try {
      // Top-level entries of the route tree; `*` is the CORS preflight (OPTIONS), on every path.
      const roots = gateway.app.printRoutes({ commonPrefix: false }).split('\n').flatMap((line) => /^[├└]── (\S+) \(/.exec(line)?.[1] ?? []);
      expect(roots).toContain('/internal/metrics');
      expect(roots).toContain('/v1/responses');
      for (const root of roots.filter((path) => path !== '/internal/metrics' && path !== '*')) expect([root, servedByGateway(root)]).toEqual([root, true]);
    } finally {
      await gateway.close();
    }
  });
});
