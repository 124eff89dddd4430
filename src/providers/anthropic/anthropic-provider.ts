import Anthropic from '@anthropic-ai/sdk';
import { Agent, fetch as undiciFetch, type Dispatcher } from 'undici';
import { traceHeaders, type TraceContext } from '../../util/trace-context.ts';
import { GatewayError } from '../../errors/gateway-error.ts';
import { IDLE_CONNECTION_MS } from '../http-upstream.ts';
import { invalidUpstreamBody } from '../invalid-upstream-body.ts';
import { outboundProxyConfigured, proxiedDispatcher } from '../outbound-proxy.ts';
import type { ModelInfo, Provider, TurnEvent, TurnRequest, TurnStream, TurnUsage } from '../provider.ts';
import { MisconfigurationReport } from '../misconfiguration-report.ts';
import { missingEndpoint, upstreamTimedOut, type ProviderLogger } from '../upstream-errors.ts';
import { errorFromAnthropic, errorFromAnthropicType } from './anthropic-errors.ts';
import { AnthropicStreamTranslator, type AnthropicStreamEvent } from './anthropic-stream-translator.ts';
import { ClaudeModelCatalog } from './claude-model-catalog.ts';
import type { ClaudeModelInfo, ClaudeThinkingSupport } from './claude-thinking-support.ts';
import { convertToAnthropicRequest, toAnthropicCountRequest, type AnthropicBlock, type AnthropicRequest, type AnthropicRequestOptions } from './convert-to-anthropic-request.ts';

export interface AnthropicProviderOptions {
  name: string;
  baseUrl: string;
  apiKey: string | null;
  /** `max_tokens` when the request sets no `max_output_tokens`. */
  defaultMaxTokens: number;
  /** Whether the gateway marks where Anthropic may cache the prompt (cache-breakpoints.ts). */
  promptCaching?: 'auto' | 'off';
  connections: number;
  /** Longest a whole upstream call may take, its stream read to the end (each `pause_turn` continuation is a call). */
  timeoutMs: number;
  /** TCP (and TLS) connect; until the response headers; longest silence inside a stream. */
  connectTimeoutMs?: number;
  firstByteTimeoutMs?: number;
  idleTimeoutMs?: number;
  /** Where upstream refusals of the gateway's own configuration are logged. */
  log?: ProviderLogger;
}

/** `pause_turn` (a long server-side turn) is continued automatically, at most this often. */
const MAX_CONTINUATIONS = 5;

type EventIterator = AsyncIterator<AnthropicStreamEvent>;

/** One upstream call being read: its events, those read ahead while opening, and its `timeoutMs` deadline. */
interface OpenedCall {
  iterator: EventIterator;
  buffered: AnthropicStreamEvent[];
  deadline: AbortSignal;
}

/**
 * Claude through Anthropic's Messages API, on the official SDK. Always
 * streams upstream (the SDK refuses long non-streaming calls); non-streaming
 * clients get the same events folded. Thinking keeps its signature, cache
 * reads and writes count as input.
 */
export class AnthropicProvider implements Provider {
  readonly name: string;
  readonly #options: AnthropicProviderOptions;
  readonly #misconfiguration: MisconfigurationReport;
  readonly #client: Anthropic;
  readonly #agent: Dispatcher;
  readonly #models: ClaudeModelCatalog;

  constructor(options: AnthropicProviderOptions) {
    this.name = options.name;
    this.#options = options;
    this.#misconfiguration = new MisconfigurationReport(options.log, options.name, options.baseUrl);
    const connection = {
      connections: options.connections,
      keepAliveTimeout: IDLE_CONNECTION_MS,
      connect: { timeout: options.connectTimeoutMs ?? 10_000 },
      headersTimeout: options.firstByteTimeoutMs ?? 300_000,
      bodyTimeout: options.idleTimeoutMs ?? 300_000,
    };
    this.#agent = outboundProxyConfigured() ? proxiedDispatcher(connection) : new Agent(connection);
    this.#client = new Anthropic({
      apiKey: options.apiKey ?? 'not-configured',
      baseURL: options.baseUrl,
      maxRetries: 0,
      timeout: options.timeoutMs,
      // The SDK writes to the console by default, which would break the JSON log stream on stdout.
      // Only its messages pass: their extra arguments can hold request details.
      logLevel: 'warn',
      logger: sdkLogger(options.log),
      fetch: ((input: string | URL | Request, init?: RequestInit) => undiciFetch(input as string, { ...(init as object), dispatcher: this.#agent } as never)) as unknown as typeof fetch,
    });
    this.#models = new ClaudeModelCatalog({ lookup: (model, lookupSignal) => this.#client.models.retrieve(model, null, { signal: lookupSignal }) as Promise<ClaudeModelInfo> });
  }

  async startTurn(request: TurnRequest, signal: AbortSignal): Promise<TurnStream> {
    const body = convertToAnthropicRequest(request, this.#requestOptions(await this.#thinkingOf(request)));
    const opened = await this.#open(body, signal, request.trace);
    return this.#events(body, opened, signal, request.trace);
  }

  /** Messages' `count_tokens`, sent the body `startTurn` would send (less what only sampling reads). */
  async countInputTokens(request: TurnRequest, signal: AbortSignal): Promise<number> {
    const body = toAnthropicCountRequest(convertToAnthropicRequest(request, this.#requestOptions(await this.#thinkingOf(request))));
    try {
      const counted = await this.#client.messages.countTokens(body as unknown as Anthropic.MessageCountTokensParams, { signal });
      return counted.input_tokens;
    } catch (error) {
      if (signal.aborted) throw error;
      const mapped = errorFromAnthropic(this.name, error);
      // A compatible server without count_tokens is no wrong base URL: the count is estimated.
      const status = (error as { status?: unknown }).status;
      const missing = typeof status === 'number' ? missingEndpoint(this.name, status, mapped) : null;
      if (missing) throw missing;
      this.#misconfiguration.heard(mapped);
      throw mapped;
    }
  }

  async listModels(signal: AbortSignal): Promise<ModelInfo[]> {
    try {
      const page = await this.#client.models.list({ limit: 100 }, { signal });
      return page.data.map((model) => ({ id: model.id, owned_by: this.name }));
    } catch {
      return [];
    }
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  #requestOptions(thinking: ClaudeThinkingSupport | null): AnthropicRequestOptions {
    return { defaultMaxTokens: this.#options.defaultMaxTokens, promptCaching: this.#options.promptCaching ?? 'auto', ...(thinking && { thinking }) };
  }

  /** How the model takes thinking, for a call that asks for reasoning (no other call waits on the Models API). */
  async #thinkingOf(request: TurnRequest): Promise<ClaudeThinkingSupport | null> {
    return request.reasoningEffort && request.reasoningEffort !== 'none' ? await this.#models.thinkingSupport(request.model) : null;
  }

  /**
   * Opens a stream and reads it up to the first content block, so an error
   * that arrives after Anthropic's 200 but before any content (say
   * `overloaded_error`) still becomes an HTTP status for the client.
   * The SDK's own `timeout` stops at the response headers; the deadline
   * here bounds the whole call, stream included.
   */
  async #open(body: AnthropicRequest, signal: AbortSignal, trace: TraceContext | undefined): Promise<OpenedCall> {
    let iterator: EventIterator;
    const buffered: AnthropicStreamEvent[] = [];
    const deadline = AbortSignal.timeout(this.#options.timeoutMs);
    try {
      const stream = await this.#client.messages.create(body as unknown as Anthropic.MessageCreateParamsStreaming, { signal: AbortSignal.any([signal, deadline]), ...(trace && { headers: traceHeaders(trace) }) });
      iterator = (stream as unknown as AsyncIterable<AnthropicStreamEvent>)[Symbol.asyncIterator]();
      for (;;) {
        const next = await iterator.next();
        if (next.done) {
          if (deadline.aborted || signal.aborted) break;
          // Ended before any content (a proxy's page under a 200, a stream cut at once): nothing is committed, so this is the call's refusal, which routing may take elsewhere.
          throw buffered.length === 0
            ? invalidUpstreamBody(this.name, null, `The upstream '${this.name}' answered without an event stream.`)
            : new GatewayError({ status: 502, type: 'upstream_error', code: 'upstream_stream_truncated', message: `The upstream '${this.name}' closed the stream before the model finished.` });
        }
        buffered.push(next.value);
        if (next.value.type === 'error') throw errorFromAnthropicType(this.name, next.value.error?.type ?? null, next.value.error?.message ?? 'The upstream reported an error.', null);
        if (next.value.type !== 'message_start' && next.value.type !== 'ping') break;
      }
      // An aborted SDK stream ends quietly, as if complete.
      if (deadline.aborted) throw this.#timedOut();
    } catch (error) {
      if (signal.aborted) throw error;
      const mapped = deadline.aborted ? this.#timedOut(error) : errorFromAnthropic(this.name, error);
      this.#misconfiguration.heard(mapped);
      throw mapped;
    }
    return { iterator, buffered, deadline };
  }

  #timedOut(cause?: unknown) {
    return upstreamTimedOut(this.name, `The upstream '${this.name}' did not finish within ${this.#options.timeoutMs} ms (timeoutMs).`, cause);
  }

  async *#events(body: AnthropicRequest, first: OpenedCall, signal: AbortSignal, trace: TraceContext | undefined): AsyncGenerator<TurnEvent> {
    const usage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, reasoningTokens: 0 };
    /** What the upstream reported it spent (this message's part included), then the failure: a turn that fails is charged all the same. */
    const failing = (translator: AnthropicStreamTranslator | null, code: string, message: string): TurnEvent[] => {
      if (translator) addUsage(usage, translator.usage());
      const error: TurnEvent = { type: 'error', code, message };
      return usage.inputTokens > 0 || usage.outputTokens > 0 ? [{ type: 'usage', usage }, error] : [error];
    };
    let opened = first;
    let request = body;
    let hasToolCalls = false;
    for (let continuation = 0; ; continuation++) {
      const translator = new AnthropicStreamTranslator();
      const content = new ContentAccumulator();
      const out: TurnEvent[] = [];
      try {
        for (let next = nextEvent(opened); ; ) {
          const result = await next;
          if (result.done) break;
          content.accept(result.value);
          translator.accept(result.value, out);
          for (const event of out) {
            if (event.type === 'error') {
              yield* failing(translator, event.code, `The upstream '${this.name}' reported: ${event.message}`);
              return;
            }
            if (event.type === 'tool_call.start') hasToolCalls = true;
            yield event;
          }
          out.length = 0;
          next = nextEvent(opened);
        }
      } catch (error) {
        if (signal.aborted) throw error;
        const mapped = opened.deadline.aborted ? this.#timedOut(error) : errorFromAnthropic(this.name, error);
        yield* failing(translator, mapped.code ?? 'upstream_error', mapped.message);
        return;
      }
      if (opened.deadline.aborted && !signal.aborted) {
        const timedOut = this.#timedOut();
        yield* failing(translator, timedOut.code ?? 'upstream_timeout', timedOut.message);
        return;
      }
      if (!translator.stopped) {
        yield* failing(translator, 'upstream_stream_truncated', `The upstream '${this.name}' closed the stream before the model finished.`);
        return;
      }
      addUsage(usage, translator.usage());
      if (translator.stopReason === 'pause_turn' && continuation < MAX_CONTINUATIONS) {
        request = { ...request, messages: [...request.messages, { role: 'assistant', content: content.blocks() }] };
        try {
          opened = await this.#open(request, signal, trace);
        } catch (error) {
          if (signal.aborted) throw error;
          const mapped = errorFromAnthropic(this.name, error);
          yield* failing(null, mapped.code ?? 'upstream_error', mapped.message);
          return;
        }
        continue;
      }
      yield { type: 'usage', usage };
      yield { type: 'finish', finish: translator.finish(hasToolCalls) };
      return;
    }
  }
}

function addUsage(total: TurnUsage, part: TurnUsage): void {
  total.inputTokens += part.inputTokens;
  total.outputTokens += part.outputTokens;
  total.cachedInputTokens += part.cachedInputTokens;
  total.reasoningTokens += part.reasoningTokens;
}

/** Serves the events read while opening first, then the rest of the stream. */
function nextEvent(opened: OpenedCall): Promise<IteratorResult<AnthropicStreamEvent>> {
  const buffered = opened.buffered.shift();
  return buffered ? Promise.resolve({ done: false, value: buffered }) : opened.iterator.next();
}

/** Rebuilds the assistant's content blocks of one message, to continue it after `pause_turn`. */
class ContentAccumulator {
  readonly #blocks = new Map<number, { block: Record<string, unknown>; json: string }>();

  accept(event: AnthropicStreamEvent): void {
    const index = event.index ?? 0;
    if (event.type === 'content_block_start' && event.content_block) this.#blocks.set(index, { block: { ...event.content_block }, json: '' });
    if (event.type !== 'content_block_delta' || !event.delta) return;
    const entry = this.#blocks.get(index);
    if (!entry) return;
    const { delta } = event;
    if (delta.type === 'text_delta') entry.block.text = `${entry.block.text ?? ''}${delta.text ?? ''}`;
    else if (delta.type === 'thinking_delta') entry.block.thinking = `${entry.block.thinking ?? ''}${delta.thinking ?? ''}`;
    else if (delta.type === 'signature_delta') entry.block.signature = delta.signature ?? '';
    else if (delta.type === 'input_json_delta') entry.json += delta.partial_json ?? '';
  }

  blocks(): AnthropicBlock[] {
    return [...this.#blocks.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, { block, json }]) => (json ? { ...block, input: JSON.parse(json) } : block) as unknown as AnthropicBlock)
      .filter((block) => block.type !== 'text' || block.text !== '');
  }
}

/** The SDK's warnings and errors as log lines of the gateway's own (or nowhere, without a logger). */
function sdkLogger(log: ProviderLogger | undefined): NonNullable<ConstructorParameters<typeof Anthropic>[0]>['logger'] {
  const silent = () => {};
  return {
    error: log ? (message: string) => log.error({ sdk: 'anthropic' }, String(message)) : silent,
    warn: log ? (message: string) => log.warn({ sdk: 'anthropic' }, String(message)) : silent,
    info: silent,
    debug: silent,
  };
}
