import { GatewayError } from '../errors/gateway-error.ts';
import type { InputItem } from '../protocol/input-items.ts';
import type { OutputItem } from '../protocol/output-items.ts';
import type { ResponseResource } from '../protocol/response-resource.ts';

/** An input item as stored: always with its id. */
export type StoredInputItem = InputItem & { id: string };

/** Any item a stored response holds, input or output, addressable by `item_reference`. */
export type StoredItem = StoredInputItem | OutputItem;

/** One stored response: what was asked, what came back, and the link to the turn before. */
export interface StoredResponse {
  tenant: string;
  response: ResponseResource;
  /** The request's own input items (not the inherited history), in order. */
  inputItems: StoredInputItem[];
  previousResponseId: string | null;
}

/** What one earlier response contributes to a conversation: its input, then its output. */
export interface ConversationTurn {
  responseId: string;
  /** How the response ended: a `requires_action` turn is resumed by the next request. */
  status: ResponseResource['status'];
  inputItems: StoredInputItem[];
  output: OutputItem[];
}

/**
 * Where responses live between requests. Every method is scoped to a tenant:
 * another tenant's id behaves exactly like an unknown one.
 */
export interface ResponseStore {
  readonly kind: 'memory' | 'redis';
  /** Stores a finished response; the store may keep the object itself, so it must not change afterwards. */
  put(record: StoredResponse): Promise<void>;
  get(tenant: string, id: string): Promise<StoredResponse | null>;
  /**
   * The turns of response `id` and all its ancestors, oldest first, in a
   * constant number of round trips whatever the depth. `missing` names the
   * first id of the chain that is no longer stored (null when it is whole).
   */
  chain(tenant: string, id: string): Promise<{ turns: ConversationTurn[]; missing: string | null }>;
  /** Stored items by id (for `item_reference`); unknown ids are absent from the map. */
  items(tenant: string, ids: string[]): Promise<Map<string, StoredItem>>;
  delete(tenant: string, id: string): Promise<boolean>;
  /** Whether the store can serve requests right now (cheap: checked before each stored request). */
  isReady(): boolean;
  /** The same, with the reason when it cannot (for `/readyz`). */
  health(): StoreHealth;
  /**
   * Resolves when a write can be taken now (waiting a little for a
   * reconnecting store), else rejects with 503 `store_unavailable` — checked
   * before a model call is spent on a response that could not be stored.
   */
  ensureWritable(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A store's state as `/readyz` reports it. Reasons: `authentication_failed`,
 * `connection_refused`, `timeout`, `host_not_found`, `error` (another
 * connection error), `connecting` (no answer yet, nothing failed so far).
 */
export type StoreHealth = { state: 'ready' } | { state: 'unavailable'; reason: string };

/** Longest `previous_response_id` chain the gateway will follow. */
export const MAX_CHAIN_DEPTH = 10_000;
/** How far a store's `chain` reads: one link past the limit, so that a deeper chain is told from one just that deep (and refused, not cut). */
export const CHAIN_READ_DEPTH = MAX_CHAIN_DEPTH + 1;

/**
 * How long a record is kept. One of a response still running (a background
 * response is stored as it starts, and as it goes `in_progress`) is kept as
 * much longer as the response may run (`loop.deadlineMs`): under a TTL
 * shorter than its run it vanished while running — not found to a reader, a
 * cancel or a retry with its Idempotency-Key (which then ran it twice) — and
 * came back when it ended. Its final record is kept the TTL from its end.
 */
export function keptForSeconds(response: ResponseResource, ttlSeconds: number, longestRunSeconds: number): number {
  return response.status === 'queued' || response.status === 'in_progress' ? ttlSeconds + longestRunSeconds : ttlSeconds;
}

/** The store refuses the gateway's own commands (a Redis user without a permission it needs): the operator must act, and no retry mends it. */
export function storeRefusesCommands(cause: unknown): GatewayError {
  return storeError("The response store refuses the gateway's commands (its Redis user lacks a permission the gateway needs); the gateway's operator must fix its configuration.", { 'x-should-retry': 'false' }, cause);
}

export function storeUnavailable(cause: unknown): GatewayError {
  return storeError('The response store is unavailable; try again shortly.', { 'retry-after': '1' }, cause);
}

/** A 503 `store_unavailable`: what the client is told, and how its SDK should retry. */
function storeError(message: string, headers: Record<string, string>, cause: unknown): GatewayError {
  return new GatewayError({ status: 503, type: 'server_error', code: 'store_unavailable', message, headers, cause });
}
