/**
 * A W3C Trace Context (https://www.w3.org/TR/trace-context/) as it travels
 * with an outgoing call: the span the call belongs to, in the `traceparent`
 * and `tracestate` header forms. Providers and executors only pass it on —
 * as HTTP headers, or in MCP's `params._meta` — and never need to know what
 * made it (observability/ fills it while tracing is on; otherwise it is
 * absent and nothing is sent).
 */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/** The context as HTTP request headers. */
export function traceHeaders(trace: TraceContext): Record<string, string> {
  return trace.tracestate ? { traceparent: trace.traceparent, tracestate: trace.tracestate } : { traceparent: trace.traceparent };
}

/** What a `traceparent`/`tracestate` pair of request headers says; null without one `traceparent`. Whether it is well formed is the reader's concern. */
export function traceContextOf(headers: Record<string, string | string[] | undefined>): TraceContext | null {
  const traceparent = headers.traceparent;
  // Several traceparent headers cannot be told apart: W3C says to ignore them all.
  if (typeof traceparent !== 'string' || traceparent === '') return null;
  const tracestate = headers.tracestate;
  // Several tracestate headers are one list (W3C: combined like any repeated header).
  const state = Array.isArray(tracestate) ? tracestate.join(',') : tracestate;
  return state ? { traceparent, tracestate: state } : { traceparent };
}

