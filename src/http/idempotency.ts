import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, invalidRequest } from '../errors/gateway-error.ts';
import type { ResponseResource } from '../protocol/response-resource.ts';
import { isFinished } from '../engine/background-runner.ts';
import { replayStoredResponse } from '../engine/replay-stored-response.ts';
import type { IdempotencyStore } from '../store/idempotency-store.ts';
import type { ResponseStore } from '../store/response-store.ts';
import { streamBackgroundEvents, type BackgroundStreamSource } from './background-stream.ts';
import { SseWriter, type StreamPacing } from './sse-writer.ts';
import { retryInBackground } from '../util/retry-in-background.ts';

export interface IdempotencyOptions {
  keys: IdempotencyStore;
  responses: ResponseStore;
  /** How long a key keeps its response. */
  ttlSeconds: number;
}

/** Longest `Idempotency-Key` taken (Stripe's bound). */
const MAX_KEY_CHARS = 255;
/** How long a running request's hold on its key outlives the replica running it (renewed every third of it while it runs). */
const PENDING_LEASE_SECONDS = 30;

/** A request holding its `Idempotency-Key`: it says which response the key stands for, or lets go. */
export interface IdempotencyHold {
  /**
   * Whether a response cut off (`interrupted`) lets the key go, so its retry
   * runs again: the engine then keeps nothing in a conversation of one whose
   * client went away, so the retry's turn is the only one.
   */
  readonly rerunsInterrupted: boolean;
  complete(response: ResponseResource): Promise<void>;
  release(): Promise<void>;
}

/**
 * `Idempotency-Key` on `POST /v1/responses`, per tenant, for a window: the
 * first request with a key runs; a retry of it (same body) gets the first
 * one's response — JSON, or as a stream — instead of running again (a 409
 * while the first still runs); the same key with another body is a 400. A
 * request that fails before there is a response lets the key go, so its
 * retry runs. Returns the hold to settle, or null when the reply was sent.
 */
/** Whether the request names an Idempotency-Key (most do not: they need not wait on `takeIdempotencyKey`). */
export function carriesIdempotencyKey(request: FastifyRequest): boolean {
  const key = request.headers['idempotency-key'];
  return typeof key === 'string' && key !== '';
}

export async function takeIdempotencyKey(request: FastifyRequest, reply: FastifyReply, stream: boolean, options: IdempotencyOptions, background: BackgroundStreamSource, answersApprovals = false): Promise<IdempotencyHold | null | 'none'> {
  const key = request.headers['idempotency-key'];
  if (typeof key !== 'string' || key === '') return 'none';
  if (key.length > MAX_KEY_CHARS) throw invalidRequest(`The Idempotency-Key header is longer than ${MAX_KEY_CHARS} characters.`, null, 'invalid_idempotency_key');
  const fingerprint = createHash('sha256').update(JSON.stringify(request.body ?? null)).digest('base64url');
  const tenant = request.tenant;
  const held = await options.keys.begin(tenant, key, fingerprint, PENDING_LEASE_SECONDS);
  if (held.kind === 'new') {
    const renewal = setInterval(() => void options.keys.renew(tenant, key, PENDING_LEASE_SECONDS).catch(() => {}), (PENDING_LEASE_SECONDS * 1000) / 3);
    renewal.unref();
    /** Once the key names its response, nothing later (a failure while that response is being sent) may let it go: a retry must get that response, not run again. */
    let completed = false;
    // A store away at the moment is asked again until it answers (within the lease), so the retry need not wait the lease out.
    const letGo = () => retryInBackground(() => options.keys.release(tenant, key), PENDING_LEASE_SECONDS * 1000);
    // A request that answered approval requests is not run again, even cut off: its approved calls may have run, and
    // each approval is answered once (approval-answers.ts), so its retry gets the response that took them.
    const rerunsInterrupted = !answersApprovals;
    return {
      rerunsInterrupted,
      complete: async (response) => {
        clearInterval(renewal);
        // A response that was not stored cannot be handed to a retry, nor one cut off because its client went away
        // (a foreground response is cancelled only so) or because its replica shut down: the retry, which is what
        // a lost connection and a restart call for, runs again (on a replica still running).
        if (response.store && !(rerunsInterrupted && interrupted(response))) {
          await options.keys.complete(tenant, key, fingerprint, response.id, options.ttlSeconds);
          completed = true;
        } else await letGo();
      },
      release: async () => {
        clearInterval(renewal);
        if (!completed) await letGo();
      },
    };
  }
  if (held.fingerprint !== fingerprint) throw invalidRequest('This Idempotency-Key was already used with a different request body; use a new key for a new request.', null, 'idempotency_key_reused');
  if (held.kind === 'pending') {
    throw new GatewayError({ status: 409, type: 'invalid_request_error', code: 'idempotency_request_in_progress', message: 'A request with this Idempotency-Key is still running; retry once it has finished.', headers: { 'retry-after': '1' } });
  }
  const record = await options.responses.get(tenant, held.responseId);
  if (!record) {
    // The response expired or was deleted: the key has nothing left to return.
    await options.keys.release(tenant, key);
    return takeIdempotencyKey(request, reply, stream, options, background);
  }
  reply.header('idempotent-replayed', 'true');
  if (!stream) {
    await reply.send(record.response);
    return null;
  }
  // A background response's kept events, while they are kept; once a finished one's have expired (their TTL is shorter than the key's), its stored items, whole.
  const eventsGone = record.response.background && isFinished(record.response) && (await background.events.lastSequence(tenant, record.response.id)) < 0;
  if (record.response.background && !eventsGone) await streamBackgroundEvents(request, reply, background, record.response.id, -1);
  else await replayStored(reply, record.response, background.pacing);
  return null;
}

/** A finished, non-background response as a stream (its deltas were not kept: each part comes as one). */
async function replayStored(reply: FastifyReply, response: ResponseResource, pacing: StreamPacing): Promise<void> {
  reply.hijack();
  const writer = new SseWriter(reply.raw, reply.getHeaders() as Record<string, string>, pacing);
  for (const event of replayStoredResponse(response)) {
    const written = writer.event(event.type, JSON.stringify(event));
    if (written !== true && !(await written)) break;
  }
  await writer.write('data: [DONE]\n\n');
  writer.end();
}

/** Cut off by its client going away (a foreground response is `cancelled` only so) or by the gateway's shutdown: not an answer to hand a retry. */
function interrupted(response: ResponseResource): boolean {
  return response.status === 'cancelled' || response.incomplete_details?.reason === 'server_shutdown';
}
