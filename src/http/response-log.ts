import type { LoopObserver } from '../engine/loop-observer.ts';
import type { ResponseResource } from '../protocol/response-resource.ts';

interface InfoLogger {
  info(fields: Record<string, unknown>, message: string): void;
}

/**
 * The one line an operator reads per response: who asked for what, where it
 * went, how it ended and what it cost. Counts turns and tool calls as the
 * loop reports them (a turn as it starts); written once the terminal event is out (the logger
 * carries the request id).
 */
export class ResponseLog implements LoopObserver {
  readonly #startedAt = performance.now();
  #firstByteAt: number | null = null;
  #turns = 0;
  #toolCalls = 0;
  #failedToolCalls = 0;

  /** Counted as it starts: a model call cut off (a client gone, a cancel) was a turn all the same. */
  turnStarted(): void {
    this.#turns++;
  }

  toolCallEnded(event: { error: string | null }): void {
    this.#toolCalls++;
    if (event.error !== null) this.#failedToolCalls++;
  }

  /** Answered without running (an unknown tool, a refusal): a failed call as the client sees it. */
  toolCallRefused(): void {
    this.#toolCalls++;
    this.#failedToolCalls++;
  }

  /** The first bytes of the answer left (the stream's first event, or the JSON body). */
  firstByte(): void {
    this.#firstByteAt ??= performance.now();
  }

  write(log: InfoLogger, response: ResponseResource, context: { tenant: string; provider: string; upstreamModel: string; stream: boolean; omittedTools: readonly string[]; deployment?: string | null; transport?: 'websocket' }): void {
    const usage = response.usage;
    log.info(
      {
        response_id: response.id,
        tenant: context.tenant,
        model: response.model,
        upstream_model: context.upstreamModel,
        provider: context.provider,
        ...(context.deployment && { deployment: context.deployment }),
        status: response.status,
        ...(response.incomplete_details && { reason: response.incomplete_details.reason }),
        ...(response.error && { error_code: response.error.code }),
        stream: context.stream,
        ...(context.transport && { transport: context.transport }),
        ...(context.omittedTools.length > 0 && { omitted_tools: context.omittedTools }),
        ...(response['loopgate:truncation'] && { truncated_items: response['loopgate:truncation'].dropped_items }),
        turns: this.#turns,
        tool_calls: this.#toolCalls,
        failed_tool_calls: this.#failedToolCalls,
        input_tokens: usage?.input_tokens ?? 0,
        output_tokens: usage?.output_tokens ?? 0,
        cached_tokens: usage?.input_tokens_details?.cached_tokens ?? 0,
        reasoning_tokens: usage?.output_tokens_details?.reasoning_tokens ?? 0,
        ttfb_ms: this.#firstByteAt === null ? null : Math.round(this.#firstByteAt - this.#startedAt),
        duration_ms: Math.round(performance.now() - this.#startedAt),
      },
      'response finished',
    );
  }
}
