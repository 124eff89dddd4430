import type { FastifyReply } from 'fastify';

/** Aborted when the client goes away before its answer is written (Fastify's `request.signal` aborts once the body is read). */
export function abortOnDisconnect(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const raw = reply.raw;
  // `close` comes once; `on` spares the wrapper `once` makes for every request.
  raw.on('close', () => {
    if (!raw.writableFinished) controller.abort(new Error('client disconnected'));
  });
  return controller.signal;
}
