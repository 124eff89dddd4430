import { Counter, Gauge, Registry } from 'prom-client';
import type { ResponseEndedEvent } from '../engine/loop-observer.ts';
import type { TurnUsage } from '../providers/provider.ts';
import { AggregatedCounter, type CounterSeries } from './aggregated-counter.ts';
import { AggregatedHistogram, type HistogramSeries } from './aggregated-histogram.ts';
import type { LabelBounds } from './label-bounds.ts';
import { processMetrics } from './process-metrics.ts';

/** What the gauges read at scrape time, from parts the metrics do not own. */
export interface ScrapedState {
  websocketConnections(): number;
  /** Background responses this replica runs now. */
  backgroundRunning(): number;
  /** The operator's MCP servers and their breaker state (`listing`, `ready`, `unavailable`). */
  mcpServers(): readonly { name: string; state: string }[];
}

/** Records one store's operations (store/): how long each took, and which failed. */
export interface StoreMeter {
  time<T>(operation: string, run: () => Promise<T>): Promise<T>;
}

const MCP_STATES = ['listing', 'ready', 'unavailable'] as const;

/**
 * What one (model, provider) pair of ended responses records into, resolved
 * once: its histogram series, and the counters' series by status and by
 * tenant.
 */
interface ModelSeries {
  readonly labels: { model: string; provider: string };
  readonly seconds: HistogramSeries<'model' | 'provider'>;
  readonly firstToken: HistogramSeries<'model' | 'provider'>;
  readonly turns: HistogramSeries<'model' | 'provider'>;
  readonly responses: Map<string, CounterSeries<'model' | 'provider' | 'status'>>;
  readonly tokens: Map<string, TokenSeries>;
}

type TokenSeries = Record<'input' | 'output' | 'cached' | 'reasoning', CounterSeries<'model' | 'provider' | 'tenant' | 'type'>>;

/**
 * Keeps `value` as `map`'s for `key` and returns it: the miss side of
 * `map.get(key) ?? remember(map, key, make())`, which allocates nothing on a
 * hit (no closure). Every key here is made of bounded labels, so the maps
 * stay as small as the series they name.
 */
function remember<K, V>(map: Map<K, V>, key: K, value: V): V {
  map.set(key, value);
  return value;
}

/**
 * The gateway's Prometheus metrics, one registry per app (so tests can run
 * several gateways in one process). Every label goes through `LabelBounds`;
 * nothing per response (ids, raw model names) becomes a label. Names and
 * labels are documented in the README ("Metrics").
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly bounds: LabelBounds;
  #state: ScrapedState | null = null;

  readonly #requests: AggregatedCounter<'method' | 'route' | 'status'>;
  readonly #responses: AggregatedCounter<'model' | 'provider' | 'status'>;
  readonly #responseSeconds: AggregatedHistogram<'model' | 'provider'>;
  readonly #firstTokenSeconds: AggregatedHistogram<'model' | 'provider'>;
  readonly #turns: AggregatedHistogram<'model' | 'provider'>;
  readonly #tokens: AggregatedCounter<'model' | 'provider' | 'tenant' | 'type'>;
  readonly #toolCallSeconds: AggregatedHistogram<'kind' | 'server' | 'outcome'>;
  /** By `kind NUL server NUL outcome`, all bounded. */
  readonly #toolCallSeries = new Map<string, HistogramSeries<'kind' | 'server' | 'outcome'>>();
  readonly #upstreamErrors: Counter<'provider' | 'code'>;
  readonly #storeSeconds: AggregatedHistogram<'store' | 'operation'>;
  readonly #storeErrors: Counter<'store' | 'operation'>;
  readonly #openStreams: Gauge;
  readonly #backgroundEnded: Counter<'status'>;
  /** By route pattern, then method, then status (methods are the HTTP parser's, routes the app's patterns). */
  readonly #requestSeries = new Map<string, Map<string, Map<number, CounterSeries<'method' | 'route' | 'status'>>>>();
  /** By model, then provider, both bounded. */
  readonly #modelSeries = new Map<string, Map<string, ModelSeries>>();

  constructor(bounds: LabelBounds) {
    this.bounds = bounds;
    const registers = [this.registry];
    this.#requests = new AggregatedCounter({ name: 'loopgate_http_requests_total', help: 'HTTP requests answered, by method, route pattern and status (499: the client left before the answer began).', labelNames: ['method', 'route', 'status'], registers });
    this.#responses = new AggregatedCounter({ name: 'loopgate_responses_total', help: 'Responses ended, by model, provider and final status.', labelNames: ['model', 'provider', 'status'], registers });
    this.#responseSeconds = new AggregatedHistogram({
      name: 'loopgate_response_duration_seconds',
      help: 'Time from the request to the end of its response, every turn and tool call included.',
      labelNames: ['model', 'provider'],
      buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
      registers,
    });
    this.#firstTokenSeconds = new AggregatedHistogram({
      name: 'loopgate_response_time_to_first_token_seconds',
      help: "Time from the request to the model's first output (text, reasoning, refusal or a tool call).",
      labelNames: ['model', 'provider'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.#turns = new AggregatedHistogram({ name: 'loopgate_response_turns', help: 'Model calls per response.', labelNames: ['model', 'provider'], buckets: [1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50], registers });
    this.#tokens = new AggregatedCounter({ name: 'loopgate_tokens_total', help: 'Tokens of ended responses, by type: input and output; cached (part of input) and reasoning (part of output).', labelNames: ['model', 'provider', 'tenant', 'type'], registers });
    this.#toolCallSeconds = new AggregatedHistogram({
      name: 'loopgate_tool_call_duration_seconds',
      help: 'Server-side tool calls and how long each ran, by executor kind, MCP server and outcome (its _count counts the calls).',
      labelNames: ['kind', 'server', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.#upstreamErrors = new Counter({ name: 'loopgate_upstream_errors_total', help: 'Model calls that failed, refused at once or in their stream, by provider and error code.', labelNames: ['provider', 'code'], registers });
    this.#storeSeconds = new AggregatedHistogram({
      name: 'loopgate_store_operation_duration_seconds',
      help: 'Store operations and how long each took, failed ones included.',
      labelNames: ['store', 'operation'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers,
    });
    this.#storeErrors = new Counter({ name: 'loopgate_store_operation_errors_total', help: 'Store operations that failed.', labelNames: ['store', 'operation'], registers });
    this.#openStreams = new Gauge({ name: 'loopgate_open_streams', help: 'Server-sent event streams open now (responses and background streams).', registers });
    this.#backgroundEnded = new Counter({ name: 'loopgate_background_responses_ended_total', help: 'Background responses this replica ran to their end, by final status.', labelNames: ['status'], registers });
    const state = () => this.#state;
    new Gauge({
      name: 'loopgate_websocket_connections',
      help: 'WebSocket connections open now on /v1/responses.',
      registers,
      collect() {
        this.set(state()?.websocketConnections() ?? 0);
      },
    });
    new Gauge({
      name: 'loopgate_background_responses',
      help: 'Background responses on this replica by state.',
      labelNames: ['state'],
      registers,
      collect() {
        this.set({ state: 'in_progress' }, state()?.backgroundRunning() ?? 0);
      },
    });
    new Gauge({
      name: 'loopgate_mcp_server_state',
      help: "Operator MCP servers' breaker state: 1 for the state each is in, 0 for the others (listing, ready, unavailable).",
      labelNames: ['server', 'state'],
      registers,
      collect() {
        this.reset();
        for (const server of state()?.mcpServers() ?? []) for (const name of MCP_STATES) this.set({ server: server.name, state: name }, server.state === name ? 1 : 0);
      },
    });
  }

  /** Where the scrape-time gauges read from (the app's sockets, background runner and MCP catalog). */
  watch(state: ScrapedState): void {
    this.#state = state;
  }

  request(method: string, route: string | undefined, status: number): void {
    const matched = route ?? 'unmatched';
    // Looked up by parts: the method and route strings are the same ones every time (their hashes cached) and the status a small number, where a key built per request would be a new string to flatten and hash.
    const byMethod = this.#requestSeries.get(matched) ?? remember(this.#requestSeries, matched, new Map());
    const byStatus = byMethod.get(method) ?? remember(byMethod, method, new Map());
    (byStatus.get(status) ?? remember(byStatus, status, this.#requests.series({ method, route: matched, status: String(status) }))).inc();
  }

  streamOpened(): void {
    this.#openStreams.inc();
  }

  streamClosed(): void {
    this.#openStreams.dec();
  }

  /** `withTokens` false: the response's tokens were counted per model call (`tokensUsed`). */
  responseEnded(event: ResponseEndedEvent, turns: number, firstTokenMs: number | null, withTokens = true): void {
    const series = this.#seriesOf(this.bounds.model(event.model), this.bounds.provider(event.provider));
    const labels = series.labels;
    const status = event.status;
    (series.responses.get(status) ?? remember(series.responses, status, this.#responses.series({ ...labels, status }))).inc();
    series.seconds.observe(event.durationMs / 1000);
    if (firstTokenMs !== null) series.firstToken.observe(firstTokenMs / 1000);
    // A response refused before its first model call ran no turn at all.
    if (turns > 0) series.turns.observe(turns);
    if (event.background) this.#backgroundEnded.inc({ status: event.status });
    const usage = event.usage;
    if (!usage || !withTokens) return;
    const tokens = this.#tokensOf(series, event.tenant);
    tokens.input.inc(usage.input_tokens);
    tokens.output.inc(usage.output_tokens);
    tokens.cached.inc(usage.input_tokens_details?.cached_tokens ?? 0);
    tokens.reasoning.inc(usage.output_tokens_details?.reasoning_tokens ?? 0);
  }

  /** One model call's tokens, under the provider that served it (a routed alias's calls may each go elsewhere). */
  tokensUsed(model: string, provider: string, tenant: string, usage: TurnUsage): void {
    const tokens = this.#tokensOf(this.#seriesOf(this.bounds.model(model), this.bounds.provider(provider)), tenant);
    tokens.input.inc(usage.inputTokens);
    tokens.output.inc(usage.outputTokens);
    tokens.cached.inc(usage.cachedInputTokens);
    tokens.reasoning.inc(usage.reasoningTokens);
  }

  #tokensOf(series: ModelSeries, tenantName: string): TokenSeries {
    const tenant = this.bounds.tenant(tenantName);
    return series.tokens.get(tenant) ?? remember(series.tokens, tenant, this.#tokenSeries(series.labels, tenant));
  }

  #seriesOf(model: string, provider: string): ModelSeries {
    const byProvider = this.#modelSeries.get(model) ?? remember(this.#modelSeries, model, new Map());
    return byProvider.get(provider) ?? remember(byProvider, provider, this.#newModelSeries({ model, provider }));
  }

  #newModelSeries(labels: ModelSeries['labels']): ModelSeries {
    return { labels, seconds: this.#responseSeconds.series(labels), firstToken: this.#firstTokenSeconds.series(labels), turns: this.#turns.series(labels), responses: new Map(), tokens: new Map() };
  }

  /** Made just before their first increments, in their order: prom-client lists series in the order it first met them. */
  #tokenSeries(labels: ModelSeries['labels'], tenant: string): TokenSeries {
    const of = (type: string) => this.#tokens.series({ ...labels, tenant, type });
    return { input: of('input'), output: of('output'), cached: of('cached'), reasoning: of('reasoning') };
  }

  toolCall(executorKind: string, operatorServer: string | null, failed: boolean, durationMs: number): void {
    const labels = { kind: executorKind, server: this.bounds.toolServer(operatorServer, executorKind), outcome: failed ? 'error' : 'success' };
    const key = `${labels.kind}\0${labels.server}\0${labels.outcome}`;
    (this.#toolCallSeries.get(key) ?? remember(this.#toolCallSeries, key, this.#toolCallSeconds.series(labels))).observe(durationMs / 1000);
  }

  upstreamError(provider: string, code: string): void {
    this.#upstreamErrors.inc({ provider: this.bounds.provider(provider), code: this.bounds.upstreamCode(code) });
  }

  /** A meter for one store (`responses`, `conversations`). */
  storeMeter(store: string): StoreMeter {
    const seconds = this.#storeSeconds;
    const errors = this.#storeErrors;
    // One label object and series per operation (the store classes' method names), not two per call.
    const byOperation = new Map<string, { labels: { store: string; operation: string }; seconds: HistogramSeries<'store' | 'operation'> }>();
    const meterOf = (operation: string) => {
      const labels = { store, operation };
      return remember(byOperation, operation, { labels, seconds: seconds.series(labels) });
    };
    return {
      async time(operation, run) {
        const meter = byOperation.get(operation) ?? meterOf(operation);
        const started = performance.now();
        try {
          return await run();
        } catch (error) {
          errors.inc(meter.labels);
          throw error;
        } finally {
          meter.seconds.observe((performance.now() - started) / 1000);
        }
      },
    };
  }

  /** The text exposition format: this gateway's metrics, then the process's (CPU, memory, event loop, GC). */
  async exposition(): Promise<{ contentType: string; body: string }> {
    const [own, process] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    // prom-client 15 writes a NaN value as `Nan` (the event loop's lag with no samples since the last scrape); the format spells it `NaN`, and strict parsers refuse the other.
    return { contentType: this.registry.contentType, body: `${own}\n${process}`.replace(/ Nan$/gm, ' NaN') };
  }
}
