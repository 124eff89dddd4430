/**
 * How much of one upstream answer the gateway holds: an answer read whole
 * (a JSON document) and one streamed event. Far beyond any model's answer (a
 * generated image in base64 is a few megabytes), so only an upstream whose
 * body never ends, or a line that never does, reaches them — which otherwise
 * filled the gateway's memory, a hundred megabytes a second, for as long as
 * the response's deadline allowed.
 */
export const MAX_UPSTREAM_BODY_BYTES = 64 * 1024 * 1024;
export const MAX_UPSTREAM_EVENT_CHARS = 32 * 1024 * 1024;
/**
 * The same bound on what a streamed answer adds up to, over a response's
 * model calls (text, reasoning, call arguments): a stream of small events
 * that never ends grew one string until the process could no longer hold it.
 */
export const MAX_UPSTREAM_ANSWER_CHARS = 64 * 1024 * 1024;

/** The code an answer over its limit fails with (`transportCode` reads it along a cause chain). */
export const ANSWER_TOO_LARGE = 'LOOPGATE_UPSTREAM_ANSWER_TOO_LARGE';

export class UpstreamAnswerTooLarge extends Error {
  readonly code = ANSWER_TOO_LARGE;

  /** `what`: "an answer" or "an event", as the message will name it. */
  constructor(what: string, limit: number, unit: 'bytes' | 'characters') {
    super(`${what} larger than ${Math.round(limit / (1024 * 1024))} Mi${unit === 'bytes' ? 'B' : ' characters'}`);
  }
}
