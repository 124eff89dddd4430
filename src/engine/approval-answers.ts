import { invalidRequest } from '../errors/gateway-error.ts';
import type { CreateResponseRequest } from '../protocol/create-response-request.ts';
import type { IdempotencyStore } from '../store/idempotency-store.ts';

/** An `mcp_approval_response` of the request's input: the approval request it answers, and where. */
export interface ApprovalAnswer {
  approvalRequestId: string;
  index: number;
}

/** Whether a request answers approval requests: its approved calls may run, and each runs once (below). */
export function answersApprovalRequests(request: CreateResponseRequest): boolean {
  return Array.isArray(request.input) && request.input.some((item) => item.type === 'mcp_approval_response');
}

/** How long a claim is held before it is settled; settled at once, so only a crash in between lets it lapse. */
const CLAIM_LEASE_SECONDS = 30;

/**
 * Each approval request is answered once, whichever continuation answers it.
 * A paused response can be continued more than once (`previous_response_id`
 * names it again, two clients approve at once on two replicas, an SDK
 * retries a request that timed out): checked against that response alone,
 * every one of those approvals ran the gated call again — the call a human
 * approved once, and gated because it writes. The first request to answer
 * takes the approval request for the response's lifetime; any later answer
 * is a 400, as for an approval request already answered in the chain.
 *
 * Kept as keys of the idempotency store (memory, or Redis shared by every
 * replica), under a name no `Idempotency-Key` header can have (a header
 * value holds no line break).
 */
export class ApprovalAnswers {
  readonly #keys: IdempotencyStore;
  readonly #ttlSeconds: number;

  constructor(keys: IdempotencyStore, ttlSeconds: number) {
    this.#keys = keys;
    this.#ttlSeconds = ttlSeconds;
  }

  /** Takes every answered approval request for `responseId`, or takes none and throws: a 400 naming one answered before. */
  async take(tenant: string, answers: readonly ApprovalAnswer[], responseId: string): Promise<void> {
    const taken: string[] = [];
    try {
      for (const { approvalRequestId, index } of answers) {
        const key = keyOf(approvalRequestId);
        const held = await this.#keys.begin(tenant, key, responseId, CLAIM_LEASE_SECONDS);
        if (held.kind !== 'new') {
          const by = held.kind === 'done' ? `response '${held.responseId}'` : 'a request still running';
          throw invalidRequest(`Approval request '${approvalRequestId}' was already answered, by ${by}; each approval request is answered once.`, `input[${index}].approval_request_id`, 'unknown_approval_request');
        }
        taken.push(key);
      }
      await Promise.all(taken.map((key) => this.#keys.complete(tenant, key, responseId, responseId, this.#ttlSeconds)));
    } catch (error) {
      await Promise.all(taken.map((key) => this.#keys.release(tenant, key).catch(() => {})));
      throw error;
    }
  }
}

function keyOf(approvalRequestId: string): string {
  return `approval\n${approvalRequestId}`;
}
