import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors/gateway-error.ts';
import { bearerToken, credentialDigest } from './bearer-credentials.ts';
import { keyOfferedAsProtocol } from './websocket/socket-protocol-key.ts';

/** The tenant of a gateway without API keys: everything belongs to it. */
export const DEFAULT_TENANT = 'default';

/** The rate-limit identity of a gateway without API keys: all its traffic is one caller. */
export const DEFAULT_KEY_ID = 'default';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who owns what this request reads and writes. */
    tenant: string;
    /** Which API key sent it, as its limits are kept (apiKeyId), never the key itself. */
    apiKeyId: string;
    /** The key is an operator's (`admin: true`; every request is, without API keys): operator views (the inspector, everyone's usage) show every tenant. */
    admin: boolean;
  }
}

interface KeyEntry {
  digest: Buffer;
  tenant: string;
  keyId: string;
  admin: boolean;
}

/**
 * The name an API key's rate limits are kept under (in Redis too): a digest
 * of its own, so neither the key nor the digest it is authenticated by is
 * stored anywhere.
 */
export function apiKeyId(key: string): string {
  return createHash('sha256').update(`loopgate-rate-limits\n${key}`).digest('hex').slice(0, 32);
}

/**
 * With API keys configured, every `/v1/` request must carry one as
 * `Authorization: Bearer <key>`; the key names the tenant. Keys are compared
 * as SHA-256 digests in constant time, always against every configured key.
 */
export function registerAuthentication(app: FastifyInstance, apiKeys: { key: string; tenant: string; admin?: boolean }[]): void {
  app.decorateRequest('tenant', DEFAULT_TENANT);
  app.decorateRequest('apiKeyId', DEFAULT_KEY_ID);
  app.decorateRequest('admin', apiKeys.length === 0);
  if (apiKeys.length === 0) return;
  const entries: KeyEntry[] = apiKeys.map(({ key, tenant, admin }) => ({ digest: credentialDigest(key), tenant, keyId: apiKeyId(key), admin: admin === true }));

  app.addHook('onRequest', (request, _reply, done) => {
    // Judged by the route the request reached, not by how its path was spelled: the router takes `//v1/…`, `/%761/…` and
    // an absolute-form target (`POST http://host/v1/…`) for the same routes, and those went through without a key.
    const route = request.routeOptions.url;
    if (request.method === 'OPTIONS' || route === undefined || !route.startsWith('/v1/')) return done();
    const headers = request.headers;
    // A browser's WebSocket cannot carry the header: its page offers the key as a subprotocol.
    const offered = headers.authorization === undefined && headers.upgrade?.toLowerCase() === 'websocket' ? keyOfferedAsProtocol(headers['sec-websocket-protocol']) : null;
    const entry = offered === null ? entryFor(entries, bearerToken(headers.authorization)) : entryFor(entries, offered);
    if (entry === null) {
      return done(new GatewayError({ status: 401, type: 'authentication_error', code: 'invalid_api_key', message: 'Missing or invalid API key. Send it as "Authorization: Bearer <key>" (a browser\'s WebSocket: as the subprotocol "openai-insecure-api-key.<key>").' }));
    }
    request.tenant = entry.tenant;
    request.apiKeyId = entry.keyId;
    request.admin = entry.admin;
    done();
  });
}

function entryFor(entries: KeyEntry[], token: string | null): KeyEntry | null {
  if (token === null) return null;
  const presented = credentialDigest(token);
  let found: KeyEntry | null = null;
  for (const entry of entries) {
    if (timingSafeEqual(presented, entry.digest) && found === null) found = entry;
  }
  return found;
}
