/** What a tenant's earlier request with the same `Idempotency-Key` left. */
export type IdempotencyRecord =
  /** No request holds the key: this one now does (the caller must `complete` or `release` it). */
  | { kind: 'new' }
  /** A request with this key is still running. */
  | { kind: 'pending'; fingerprint: string }
  /** A request with this key finished as response `responseId`. */
  | { kind: 'done'; fingerprint: string; responseId: string };

/**
 * `Idempotency-Key` on `POST /v1/responses`: per tenant, for `ttlSeconds`,
 * a retried request gets the first one's response instead of running again.
 * `fingerprint` identifies the request body, so a key reused for another
 * request is told apart.
 */
export interface IdempotencyStore {
  /**
   * Takes the key for this request, or reports what holds it. The hold lasts
   * `leaseSeconds` unless renewed: a replica that dies holding a key (killed,
   * out of memory) lets it go within that, so the retry it was kept for runs.
   */
  begin(tenant: string, key: string, fingerprint: string, leaseSeconds: number): Promise<IdempotencyRecord>;
  /** The request holding the key still runs: its hold lasts `leaseSeconds` more (a finished key is left as it is). */
  renew(tenant: string, key: string, leaseSeconds: number): Promise<void>;
  /** The request under the key produced this stored response. */
  complete(tenant: string, key: string, fingerprint: string, responseId: string, ttlSeconds: number): Promise<void>;
  /** The request under the key failed before there was a response to return: a retry runs again. */
  release(tenant: string, key: string): Promise<void>;
}
