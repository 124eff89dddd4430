import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors/gateway-error.ts';
import { bearerToken, credentialDigest } from './bearer-credentials.ts';

/** The tenant of a gateway without API keys: everything belongs to it. */
export const DEFAULT_TENANT = 'default';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who owns what this request reads and writes. */
    tenant: string;
  }
}

interface KeyEntry {
  digest: Buffer;
  tenant: string;
}

/**
 * With API keys configured, every `/v1/` request must carry one as
 * `Authorization: Bearer <key>`; the key names the tenant. Keys are compared
 * as SHA-256 digests in constant time, always against every configured key.
 */
export function registerAuthentication(app: FastifyInstance, apiKeys: { key: string; tenant: string }[]): void {
  app.decorateRequest('tenant', DEFAULT_TENANT);
  if (apiKeys.length === 0) return;
  const entries: KeyEntry[] = apiKeys.map(({ key, tenant }) => ({ digest: credentialDigest(key), tenant }));

  app.addHook('onRequest', (request, _reply, done) => {
    if (request.method === 'OPTIONS' || !request.url.startsWith('/v1/')) return done();
    const tenant = tenantFor(entries, request.headers.authorization);
    if (tenant === null) {
      return done(new GatewayError({ status: 401, type: 'authentication_error', code: 'invalid_api_key', message: 'Missing or invalid API key. Send it as "Authorization: Bearer <key>".' }));
    }
    request.tenant = tenant;
    done();
  });
}

function tenantFor(entries: KeyEntry[], authorization: string | undefined): string | null {
  const token = bearerToken(authorization);
  if (token === null) return null;
  const presented = credentialDigest(token);
  let tenant: string | null = null;
  for (const entry of entries) {
    if (timingSafeEqual(presented, entry.digest) && tenant === null) tenant = entry.tenant;
  }
  return tenant;
}
