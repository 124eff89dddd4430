import type { ConversationTurn } from '../store/response-store.ts';

/**
 * The most recent response of one connection (a WebSocket), kept in memory
 * so the next turn continues from it without a store round trip — and with
 * `store: false`, where there is nothing stored to continue from. Only the
 * latest response is kept (OpenResponses 2026-04-24, "WebSocket
 * Continuation"): its whole chain of turns, which is what the next turn's
 * model call needs; older stored responses are read from the store.
 */
export class ConnectionResponses {
  #latest: { id: string; turns: readonly ConversationTurn[] } | null = null;

  /** The turns ending with response `id`, oldest first, when this connection holds them. */
  chain(id: string): readonly ConversationTurn[] | null {
    return this.#latest?.id === id ? this.#latest.turns : null;
  }

  /** Keeps a finished response (the last of `turns`) as the one the next turn may continue from. */
  remember(turns: readonly ConversationTurn[]): void {
    const last = turns.at(-1);
    if (last) this.#latest = { id: last.responseId, turns };
  }

  /** Forgets response `id`: a continuation from it failed, so it must not be continued from again. */
  evict(id: string): void {
    if (this.#latest?.id === id) this.#latest = null;
  }
}
