import { defaultTextMapSetter, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type TextMapPropagator, type Tracer } from '@opentelemetry/api';
import type { LoopObserver, ModelCallEndedEvent, ModelCallStartedEvent, ResponseEndedEvent, ResponseRefusedEvent, ResponseStartedEvent, ToolCallEndedEvent, ToolCallRefusedEvent, ToolCallStartedEvent, TraceCarrier } from '../engine/loop-observer.ts';
import type { TurnUsage } from '../providers/provider.ts';
import type { RefusedAttempt } from '../providers/routing/routed-provider.ts';
import { GEN_AI, LOOPGATE, MCP_METHOD_NAME, OPERATION } from './gen-ai-attributes.ts';
import { inputMessages, outputMessages, parsedArguments, systemInstructions, toolDefinitions } from './gen-ai-content.ts';
import { jsonStringField } from '../util/json-string-field.ts';

/** What the tracer knows of a configured provider. */
export interface TracedProvider {
  /** `gen_ai.provider.name`: the API family (openai, anthropic). */
  genAiName: string;
  /** `server.address` / `server.port` of its upstream. */
  address: string;
  port: number;
}

/** A failed tool span's status without content capture: that it failed, not what the tool said. */
const TOOL_ERROR_WITHHELD = 'The tool call failed (its error is tool output: recorded with tracing.captureContent).';

export interface ResponseTracerOptions {
  tracer: Tracer;
  propagator: TextMapPropagator;
  /** The client's trace (its traceparent), or the root context: the response span's parent. */
  parent: Context;
  captureContent: boolean;
  providers: ReadonlyMap<string, TracedProvider>;
  /** Blanks configured secrets out of error texts before they leave in a span. */
  redact(text: string): string;
}

/** Longest error description a span status carries. */
/** Codes are words; an upstream's may be anything. */
const MAX_ERROR_TYPE_CHARS = 128;
const MAX_STATUS_CHARS = 1_000;

/**
 * The spans of one response, following the GenAI semantic conventions: the
 * response (`invoke_agent`, kind SERVER — it is where the client's request
 * enters loopgate), under it one `chat <model>` CLIENT span per model call and
 * one `execute_tool <tool>` span per tool call. Each model and tool call's
 * span goes with it as its trace context (the carrier in the hook's event),
 * so upstreams and MCP servers continue the same trace. Ends every span it
 * started: a call the loop never finished ends with the response.
 */
export class ResponseTracer implements LoopObserver {
  readonly #options: ResponseTracerOptions;
  #response: Span | null = null;
  #context: Context;
  #provider: TracedProvider | null = null;
  readonly #modelCalls = new Map<number, { span: Span; stream: boolean; model: string }>();
  readonly #toolCalls = new Map<string, Span>();
  /**
   * One wall-clock anchor for all of the response's spans, read finer than the SDK's own (which
   * anchors each span to `Date.now()`, whole milliseconds apart): children then never appear to
   * start before their parent or to end after it.
   */
  readonly #epochOffsetMs = Date.now() - performance.now();

  constructor(options: ResponseTracerOptions) {
    this.#options = options;
    this.#context = options.parent;
  }

  responseStarted(event: ResponseStartedEvent): void {
    this.#provider = this.#options.providers.get(event.provider) ?? null;
    const attributes: Attributes = {
      [GEN_AI.operationName]: OPERATION.invokeAgent,
      [GEN_AI.requestModel]: event.model,
      [GEN_AI.responseId]: event.responseId,
      [GEN_AI.requestStream]: event.stream,
      [LOOPGATE.tenant]: event.tenant,
      [LOOPGATE.provider]: event.provider,
      [LOOPGATE.upstreamModel]: event.upstreamModel,
      [LOOPGATE.background]: event.background,
    };
    if (this.#provider) attributes[GEN_AI.providerName] = this.#provider.genAiName;
    if (event.conversationId) attributes[GEN_AI.conversationId] = event.conversationId;
    if (event.previousResponseId) attributes[LOOPGATE.previousResponseId] = event.previousResponseId;
    // From when the engine took the request: reading the conversation and listing tools are part of the response.
    this.#response = this.#options.tracer.startSpan(OPERATION.invokeAgent, { kind: SpanKind.SERVER, attributes, startTime: this.#epochOffsetMs + event.startedAt }, this.#options.parent);
    this.#context = trace.setSpan(this.#options.parent, this.#response);
  }

  responseEnded(event: ResponseEndedEvent): void {
    const span = this.#response;
    if (!span) return;
    this.#endOpenCalls();
    this.#servedBy(span, event);
    span.setAttribute(LOOPGATE.responseStatus, event.status);
    if (event.incompleteReason) span.setAttribute(LOOPGATE.incompleteReason, event.incompleteReason);
    const usage = event.usage;
    if (usage) {
      span.setAttributes(usageAttributes({ inputTokens: usage.input_tokens, outputTokens: usage.output_tokens, cachedInputTokens: usage.input_tokens_details.cached_tokens, reasoningTokens: usage.output_tokens_details.reasoning_tokens }));
    }
    if (event.status === 'failed') this.#fail(span, event.error?.code ?? 'server_error', event.error?.message ?? 'The response failed.');
    span.end(this.#now());
    this.#response = null;
  }

  responseRefused(event: ResponseRefusedEvent): void {
    const span = this.#response;
    if (!span) return;
    this.#endOpenCalls();
    this.#servedBy(span, event);
    span.setAttribute(LOOPGATE.responseStatus, 'refused');
    // As HTTP's conventions have it for a server's span: a request the client got wrong (4xx) is said, not an error of the server's.
    if (event.httpStatus < 500) span.setAttribute('error.type', this.#errorType(event.errorCode));
    else this.#fail(span, event.errorCode, event.error.message);
    span.end(this.#now());
    this.#response = null;
  }

  /** Where the response's latest call went (a routed alias's deployment), known once it ends. */
  #servedBy(span: Span, event: { provider: string; upstreamModel: string }): void {
    span.setAttributes({ [LOOPGATE.provider]: event.provider, [LOOPGATE.upstreamModel]: event.upstreamModel });
    const upstream = this.#options.providers.get(event.provider);
    if (upstream) span.setAttribute(GEN_AI.providerName, upstream.genAiName);
  }

  modelCallStarted({ turn, provider, request, trace: carrier }: ModelCallStartedEvent): void {
    const upstream = this.#options.providers.get(provider) ?? this.#provider;
    const attributes: Attributes = {
      [GEN_AI.operationName]: OPERATION.chat,
      [GEN_AI.requestModel]: request.model,
      [GEN_AI.requestStream]: request.stream,
      [LOOPGATE.turn]: turn,
    };
    if (upstream) {
      attributes[GEN_AI.providerName] = upstream.genAiName;
      attributes['server.address'] = upstream.address;
      attributes['server.port'] = upstream.port;
    }
    if (request.maxOutputTokens !== null) attributes[GEN_AI.requestMaxTokens] = request.maxOutputTokens;
    if (request.temperature !== null) attributes[GEN_AI.requestTemperature] = request.temperature;
    if (request.topP !== null) attributes[GEN_AI.requestTopP] = request.topP;
    if (request.presencePenalty !== null) attributes[GEN_AI.requestPresencePenalty] = request.presencePenalty;
    if (request.frequencyPenalty !== null) attributes[GEN_AI.requestFrequencyPenalty] = request.frequencyPenalty;
    if (this.#options.captureContent) {
      attributes[GEN_AI.inputMessages] = inputMessages(request);
      const instructions = systemInstructions(request);
      if (instructions) attributes[GEN_AI.systemInstructions] = instructions;
      const tools = toolDefinitions(request);
      if (tools) attributes[GEN_AI.toolDefinitions] = tools;
    }
    const span = this.#options.tracer.startSpan(`${OPERATION.chat} ${request.model}`, { kind: SpanKind.CLIENT, attributes, startTime: this.#now() }, this.#context);
    this.#modelCalls.set(turn, { span, stream: request.stream, model: request.model });
    this.#propagate(span, carrier);
  }

  modelCallEnded(event: ModelCallEndedEvent): void {
    const call = this.#modelCalls.get(event.turn);
    if (!call) return;
    this.#modelCalls.delete(event.turn);
    const { span } = call;
    // A routed alias's call is known to have gone to its deployment only now: its provider, address and model.
    const upstream = this.#options.providers.get(event.provider);
    if (upstream) span.setAttributes({ [GEN_AI.providerName]: upstream.genAiName, 'server.address': upstream.address, 'server.port': upstream.port });
    if (event.model !== call.model) {
      span.setAttribute(GEN_AI.requestModel, event.model);
      span.updateName(`${OPERATION.chat} ${event.model}`);
    }
    if (event.usage) span.setAttributes(usageAttributes(event.usage));
    if (event.responseModel) span.setAttribute(GEN_AI.responseModel, event.responseModel);
    if (event.responseId) span.setAttribute(GEN_AI.responseId, event.responseId);
    if (event.finish) span.setAttribute(GEN_AI.responseFinishReasons, [event.finish.raw ?? event.finish.reason]);
    if (call.stream && event.firstEventMs !== null) span.setAttribute(GEN_AI.responseTimeToFirstChunk, event.firstEventMs / 1000);
    if (this.#options.captureContent && !event.error) span.setAttribute(GEN_AI.outputMessages, outputMessages(event.output, event.finish));
    for (const attempt of event.refusedAttempts) span.addEvent(LOOPGATE.failoverEvent, this.#failoverAttributes(attempt), this.#epochOffsetMs + attempt.at);
    if (event.error) this.#fail(span, event.error.code, event.error.message);
    span.end(this.#now());
  }

  /** Which deployment refused, and how: the gateway's code for the refusal and its message (which names the upstream's status; redacted, as a status message is). */
  #failoverAttributes(attempt: RefusedAttempt): Attributes {
    const attributes: Attributes = {
      [LOOPGATE.deployment]: attempt.deployment,
      [LOOPGATE.provider]: attempt.providerName,
      [LOOPGATE.upstreamModel]: attempt.upstreamModel,
      'error.type': this.#errorType(attempt.code ?? 'upstream_error'),
      'exception.message': this.#options.redact(attempt.message).slice(0, MAX_STATUS_CHARS),
    };
    const upstream = this.#options.providers.get(attempt.providerName);
    if (upstream) Object.assign(attributes, { [GEN_AI.providerName]: upstream.genAiName, 'server.address': upstream.address, 'server.port': upstream.port });
    return attributes;
  }

  toolCallStarted(event: ToolCallStartedEvent): void {
    const attributes: Attributes = {
      [GEN_AI.operationName]: OPERATION.executeTool,
      [GEN_AI.toolName]: event.name,
      [GEN_AI.toolCallId]: event.callId,
      // The conventions' word for a tool the agent runs itself (`function` is one the client runs).
      [GEN_AI.toolType]: 'extension',
      [LOOPGATE.executor]: event.executor,
      [LOOPGATE.turn]: event.turn,
    };
    if (event.executor === 'mcp') attributes[MCP_METHOD_NAME] = 'tools/call';
    if (event.itemId !== event.callId) attributes[LOOPGATE.toolItemId] = event.itemId;
    if (this.#options.captureContent) attributes[GEN_AI.toolCallArguments] = JSON.stringify(parsedArguments(event.arguments));
    const span = this.#options.tracer.startSpan(`${OPERATION.executeTool} ${event.name}`, { kind: SpanKind.INTERNAL, attributes, startTime: this.#now() }, this.#context);
    this.#toolCalls.set(event.callId, span);
    this.#propagate(span, event.trace);
  }

  toolCallEnded(event: ToolCallEndedEvent): void {
    const span = this.#toolCalls.get(event.callId);
    if (!span) return;
    this.#toolCalls.delete(event.callId);
    // MCP's conventions name a failed tool call (`isError`) so; timeouts and cancellations read the same to the model.
    // A tool's error is its result, content like any other (an MCP tool's error names what it was asked for): said only with content capture on.
    // The gateway's own (a timeout, a cancellation) is no content.
    if (event.error !== null) this.#fail(span, 'tool_error', this.#options.captureContent || event.unfinished ? unwrappedError(event.error) : TOOL_ERROR_WITHHELD);
    else if (this.#options.captureContent) span.setAttribute(GEN_AI.toolCallResult, this.#options.redact(event.output));
    span.end(this.#now());
  }

  /**
   * A call the gateway answered without running it (an unknown tool, a
   * policy's refusal, bad arguments, past a limit): a span of no length with
   * status ERROR, `error.type` `tool_refused`, so that the turn it cost shows.
   */
  toolCallRefused(event: ToolCallRefusedEvent): void {
    const now = this.#now();
    const attributes: Attributes = { [GEN_AI.operationName]: OPERATION.executeTool, [GEN_AI.toolName]: event.name, [GEN_AI.toolCallId]: event.callId, [LOOPGATE.turn]: event.turn };
    const span = this.#options.tracer.startSpan(`${OPERATION.executeTool} ${event.name}`, { kind: SpanKind.INTERNAL, attributes, startTime: now }, this.#context);
    this.#fail(span, 'tool_refused', unwrappedError(event.error));
    span.end(now);
  }

  #now(): number {
    return this.#epochOffsetMs + performance.now();
  }

  /** Writes the call's span into the carrier as W3C headers: the call sends them on. */
  #propagate(span: Span, carrier: TraceCarrier): void {
    this.#options.propagator.inject(trace.setSpan(this.#context, span), carrier, defaultTextMapSetter);
  }

  /** An error's code as `error.type`: an upstream's own (its refusal's code passes through) may echo a credential, and is bounded as a message is. */
  #errorType(code: string): string {
    return this.#options.redact(code).slice(0, MAX_ERROR_TYPE_CHARS);
  }

  #fail(span: Span, type: string, message: string): void {
    span.setAttribute('error.type', this.#errorType(type));
    span.setStatus({ code: SpanStatusCode.ERROR, message: this.#options.redact(message).slice(0, MAX_STATUS_CHARS) });
  }

  /** Calls the loop never reported as ended (their stream was never read) end with the response. */
  #endOpenCalls(): void {
    for (const { span } of this.#modelCalls.values()) span.end(this.#now());
    for (const span of this.#toolCalls.values()) span.end(this.#now());
    this.#modelCalls.clear();
    this.#toolCalls.clear();
  }
}

function usageAttributes(usage: TurnUsage): Attributes {
  return {
    [GEN_AI.usageInputTokens]: usage.inputTokens,
    [GEN_AI.usageOutputTokens]: usage.outputTokens,
    [GEN_AI.usageCacheReadInputTokens]: usage.cachedInputTokens,
    [GEN_AI.usageReasoningOutputTokens]: usage.reasoningTokens,
  };
}

/** A tool error as the client's output reads it: its `error`, not the JSON the model is given around it. */
function unwrappedError(error: string): string {
  return jsonStringField(error, 'error') ?? error;
}
