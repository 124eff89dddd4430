export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * A fetch for the Streamable HTTP transport that ends a tool call's own HTTP
 * exchange when the call is cancelled (the client went away, the call timed
 * out).
 *
 * The MCP SDK client cancels a call by sending `notifications/cancelled`, and
 * a server that hears it sends no answer (as the specification asks): but the
 * SDK made the call's POST with only the transport's own signal, so that
 * POST's event stream — or, from a server answering in JSON, its pending
 * answer — stayed open for the rest of the session, a socket on each side per
 * cancelled call. The newer specification says it plainly: on Streamable HTTP,
 * closing the call's stream is the cancellation.
 *
 * So each `tools/call` POST gets a signal of its own, and the cancellation
 * notice for its id, which comes through this fetch too, ends it: its stream
 * is closed as the SDK sees it, and the exchange aborted. A stream closed
 * before its answer is one the SDK reconnects to when the server made it
 * resumable (it gave event ids): an answer to the cancelled id goes last on
 * it, which the SDK, having forgotten the id, drops.
 */
export function cancellableCallFetch(fetchImpl: FetchLike): FetchLike {
  const open = new Map<unknown, () => void>();
  return async (input, init) => {
    const message = jsonRpcMessageOf(init?.body);
    if (message?.method === 'notifications/cancelled') open.get(message.params?.requestId)?.();
    if (message?.method !== 'tools/call' || message.id === undefined) return fetchImpl(input, init);
    const id = message.id;
    const controller = new AbortController();
    const signal = init?.signal ? AbortSignal.any([init.signal, controller.signal]) : controller.signal;
    let cancelled = false;
    open.set(id, () => {
      cancelled = true;
      open.delete(id);
      controller.abort(new Error('The tool call was cancelled.'));
    });
    let response: Response;
    try {
      response = await fetchImpl(input, { ...init, signal });
    } catch (error) {
      open.delete(id);
      throw error;
    }
    if (!response.body) {
      open.delete(id);
      return response;
    }
    const eventStream = /^text\/event-stream\b/i.test(response.headers.get('content-type') ?? '');
    const body = endableBody(response.body, () => open.delete(id));
    open.set(id, () => {
      cancelled = true;
      open.delete(id);
      body.end(eventStream ? `\n\nevent: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [] } })}\n\n` : null);
      controller.abort(new Error('The tool call was cancelled.'));
    });
    if (cancelled) body.end(null);
    return new Response(body.stream, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The JSON-RPC message a request body carries (the transport sends one per POST), or null. */
function jsonRpcMessageOf(body: unknown): { method?: unknown; id?: unknown; params?: { requestId?: unknown } } | null {
  if (typeof body !== 'string' || !body.includes('"method"')) return null;
  try {
    const parsed: unknown = JSON.parse(body);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as { method?: unknown; id?: unknown }) : null;
  } catch {
    return null;
  }
}

/** `source` passed on, with a way to end it early (after `last`, text the reader is given as the stream's end); `settled` once it ends either way. */
function endableBody(source: ReadableStream<Uint8Array>, settled: () => void): { stream: ReadableStream<Uint8Array>; end: (last: string | null) => void } {
  const reader = source.getReader();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let ended = false;
  const finish = () => {
    if (ended) return false;
    ended = true;
    settled();
    return true;
  };
  const stream = new ReadableStream<Uint8Array>({
    start(own) {
      controller = own;
    },
    async pull(own) {
      try {
        const { done, value } = await reader.read();
        if (ended) return;
        if (done) {
          finish();
          own.close();
        } else {
          own.enqueue(value);
        }
      } catch (error) {
        if (finish()) own.error(error);
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
  return {
    stream,
    end(last) {
      if (!finish()) return;
      if (last !== null) controller.enqueue(new TextEncoder().encode(last));
      controller.close();
      reader.cancel().catch(() => {});
    },
  };
}
