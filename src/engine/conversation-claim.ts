import { GatewayError, notFound } from '../errors/gateway-error.ts';
import type { ResponseResource } from '../protocol/response-resource.ts';
import type { ConversationClaim as ConversationClaimOutcome, ConversationStore } from '../store/conversation-store.ts';
import type { StoredInputItem } from '../store/response-store.ts';
import { retryInBackground } from '../util/retry-in-background.ts';

/** How long a claim lasts unrenewed: a replica that dies mid-response blocks its conversation this long at most. */
const CLAIM_TTL_MS = 15_000;
const RENEW_EVERY_MS = 5_000;

export function conversationNotFound(id: string): GatewayError {
  return notFound(`Conversation with id '${id}' not found.`, 'conversation_not_found', 'conversation');
}

/**
 * One response's hold on its conversation (`conversation` on
 * `POST /v1/responses`): taken before the conversation's items are read,
 * renewed while the response runs, and released when it ends — with the
 * response's input and output appended in the same atomic step. A second
 * response on a conversation that is taken is a 409; see ConversationStore.
 *
 * What is appended: input and output for every ending except `failed` (a
 * failed response adds nothing, so a retry does not repeat the input);
 * `incomplete` and `cancelled` responses keep what was said before they
 * stopped, and a `requires_action` response its pending calls, which the next
 * response's outputs answer.
 */
export class ConversationClaim {
  readonly conversationId: string;
  readonly #store: ConversationStore;
  readonly #tenant: string;
  readonly #holder: string;
  readonly #renewal: NodeJS.Timeout;
  #settled = false;
  /** A renewal found another response holding the conversation: this one's claim lapsed (the process stalled past the lease) and was taken. */
  #lost = false;

  private constructor(store: ConversationStore, tenant: string, conversationId: string, holder: string) {
    this.#store = store;
    this.#tenant = tenant;
    this.conversationId = conversationId;
    this.#holder = holder;
    this.#renewal = setInterval(() => void this.#renew().catch(() => {}), RENEW_EVERY_MS);
    this.#renewal.unref();
  }

  /** Takes the conversation for response `holder`; 404 when it does not exist, 409 while another response runs in it. */
  static async take(store: ConversationStore, tenant: string, conversationId: string, holder: string): Promise<ConversationClaim> {
    const outcome = await store.claim(tenant, conversationId, holder, CLAIM_TTL_MS);
    if (outcome === 'conversation_not_found') throw conversationNotFound(conversationId);
    if (outcome === 'busy') {
      throw new GatewayError({
        status: 409,
        type: 'invalid_request_error',
        code: 'conversation_locked',
        param: 'conversation',
        message: `Another response is in progress in conversation '${conversationId}'; retry once it has finished.`,
        // Not retried by the SDKs on their own: a double submit would otherwise run once the first ends, adding its turn twice.
        headers: { 'x-should-retry': 'false' },
      });
    }
    return new ConversationClaim(store, tenant, conversationId, holder);
  }

  /**
   * The response ended: its items join the conversation (see above) and the
   * claim is released. A failed one adds nothing, nor does one whose client
   * went away (`cancelled`: it got nothing) when its retry runs again
   * (`rerunIfInterrupted`): either way the retry's turn is the only one. One
   * cut short by a shutdown was answered (`incomplete`): its turn stays.
   */
  async finish(response: ResponseResource, input: readonly StoredInputItem[], rerunIfInterrupted = false): Promise<void> {
    if (this.#settle()) return;
    if (!addsTurn(response, rerunIfInterrupted)) return this.#release();
    if (this.#lost) throw this.#lostError();
    let appended: boolean;
    try {
      appended = await this.#store.appendAndRelease(this.#tenant, this.conversationId, this.#holder, [...input, ...response.output]);
    } catch (error) {
      // Nothing was added (the response fails for it): the conversation is freed once the store answers.
      void this.#release().catch(() => {});
      throw error;
    }
    if (!appended) throw this.#lostError();
  }

  /**
   * Before the response is stored as ended: whether it still holds the
   * conversation, asked of the store (and renewed, for the writes that
   * follow). A process stalled past the lease (a suspended VM, a stopped
   * container) may find another response has gone on in the conversation
   * meanwhile: its turn can no longer be added, and the client is told so
   * rather than answered as if it had been.
   */
  async confirm(response: ResponseResource, rerunIfInterrupted = false): Promise<void> {
    if (this.#settled || !addsTurn(response, rerunIfInterrupted)) return;
    if (this.#lost || (await this.#renew()) === 'busy') throw this.#lostError();
  }

  /** The response never started: release without appending (best effort: tried again while the store is away, and the claim lapses anyway). */
  async abandon(): Promise<void> {
    if (this.#settle()) return;
    await this.#release().catch(() => {});
  }

  async #renew(): Promise<ConversationClaimOutcome> {
    const outcome = await this.#store.claim(this.#tenant, this.conversationId, this.#holder, CLAIM_TTL_MS, true);
    if (outcome === 'busy') this.#lost = true;
    return outcome;
  }

  #lostError(): GatewayError {
    return new GatewayError({
      status: 409,
      type: 'invalid_request_error',
      code: 'conversation_claim_lost',
      param: 'conversation',
      message: `This response's turn was not added to conversation '${this.conversationId}': the response held the conversation past its ${CLAIM_TTL_MS / 1000} s lease without renewing it (the gateway was stalled or suspended), and another response has gone on in the conversation since.`,
      // Sent again, it would run against a conversation that has moved on: the client decides.
      headers: { 'x-should-retry': 'false' },
    });
  }

  /** Frees the conversation; a store away at the moment is asked again until it answers (within the claim's lease), so the next response need not wait the lease out. */
  #release(): Promise<void> {
    return retryInBackground(() => this.#store.release(this.#tenant, this.conversationId, this.#holder), CLAIM_TTL_MS);
  }

  /** Stops renewing; true when already settled. */
  #settle(): boolean {
    clearInterval(this.#renewal);
    const already = this.#settled;
    this.#settled = true;
    return already;
  }
}

/** Whether the response's items join the conversation as it ends (see `finish`). */
function addsTurn(response: ResponseResource, rerunIfInterrupted: boolean): boolean {
  return response.status !== 'failed' && !(rerunIfInterrupted && response.status === 'cancelled');
}
