import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { defaultTextMapGetter, ROOT_CONTEXT, type Context, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, TracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { GatewayConfig } from '../config/load-config.ts';
import type { LoopObserver } from '../engine/loop-observer.ts';
import type { SecretRedactor } from '../util/secret-redactor.ts';
import type { TraceContext } from '../util/trace-context.ts';
import { ReportingExporter, type ExportLogger } from './reporting-exporter.ts';
import { spanQueueDrops } from './span-queue-drops.ts';
import { genAiProviderName } from './gen-ai-attributes.ts';
import { ResponseTracer, type TracedProvider } from './response-tracer.ts';
import { DEFAULT_OTLP_TRACES_URL, tracingEnabled } from './tracing-settings.ts';

/** Longest one export may take, and what a shutdown waits for the last one. */
const EXPORT_TIMEOUT_MS = 10_000;
const SHUTDOWN_MS = 5_000;

/** Longest a span attribute may be: captured conversations grow with every turn. */
const MAX_ATTRIBUTE_CHARS = 128 * 1024;

const VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

export interface TracingOptions {
  config: GatewayConfig['tracing'];
  providers: GatewayConfig['providers'];
  secrets: SecretRedactor;
  log: ExportLogger;
  /** Where spans go instead of the OTLP exporter (tests, benchmarks). */
  exporter?: SpanExporter;
}

/**
 * OpenTelemetry traces for the gateway, created only when they are on. Its
 * own tracer provider, exporter and propagator, registered nowhere global:
 * nothing else in the process is patched or changed, and every app built in
 * one process (tests) keeps its spans apart. Hands out one observer per
 * response (response-tracer.ts); `shutdown` exports what is still queued.
 */
export class Tracing {
  readonly #provider: TracerProvider;
  readonly #reporting: ReportingExporter;
  readonly #tracer: Tracer;
  readonly #propagator = new W3CTraceContextPropagator();
  readonly #providers: ReadonlyMap<string, TracedProvider>;
  readonly #captureContent: boolean;
  readonly #redact: (text: string) => string;

  /** The gateway's tracing, or null when the configuration leaves it off. */
  static create(options: TracingOptions): Tracing | null {
    return tracingEnabled(options.config) ? new Tracing(options) : null;
  }

  private constructor(options: TracingOptions) {
    const { config } = options;
    const Exporter = config.protocol === 'http/json' ? JsonTraceExporter : ProtobufTraceExporter;
    const exporter = options.exporter ?? new Exporter({ url: config.endpoint ?? DEFAULT_OTLP_TRACES_URL, headers: config.headers, timeoutMillis: EXPORT_TIMEOUT_MS });
    const reporting = new ReportingExporter(exporter, options.log, config.endpoint ?? DEFAULT_OTLP_TRACES_URL);
    this.#reporting = reporting;
    this.#provider = new TracerProvider({
      // OTEL_RESOURCE_ATTRIBUTES (deployment.environment, …) as every OpenTelemetry SDK reads it, then the gateway's own; each
      // process its own instance id, so a collector tells replicas apart.
      resource: detectResources({ detectors: [envDetector] }).merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName, [ATTR_SERVICE_VERSION]: VERSION, 'service.instance.id': randomUUID() })),
      // A client's sampled flag decides for its own trace; the ratio, for traces that start here.
      sampler: new ParentBasedSampler({ root: config.sampleRatio >= 1 ? new AlwaysOnSampler() : new TraceIdRatioBasedSampler(config.sampleRatio) }),
      spanLimits: { attributeValueLengthLimit: MAX_ATTRIBUTE_CHARS },
      spanProcessors: [new BatchSpanProcessor({ exporter: reporting, exportTimeoutMillis: EXPORT_TIMEOUT_MS, selfObsMeterProvider: spanQueueDrops((spans) => reporting.queueFull(spans)) })],
    });
    this.#tracer = this.#provider.getTracer('loopgate', VERSION);
    this.#providers = new Map(Object.entries(options.providers).map(([name, provider]) => [name, tracedProvider(provider)]));
    this.#captureContent = config.captureContent;
    this.#redact = (text) => options.secrets.redact(text);
  }

  /** The observer tracing one response, under the client's trace when it sent one (a malformed traceparent is ignored). */
  observer(parent: TraceContext | null): LoopObserver {
    return new ResponseTracer({
      tracer: this.#tracer,
      propagator: this.#propagator,
      parent: this.#parentOf(parent),
      captureContent: this.#captureContent,
      providers: this.#providers,
      redact: this.#redact,
    });
  }

  /** Exports what is queued now (tests and benchmarks read it at once). */
  async flush(): Promise<void> {
    await this.#provider.forceFlush();
  }

  /** Exports what is queued, then stops; spans ended later are dropped. An unreachable collector holds a shutdown up for SHUTDOWN_MS at most. */
  async shutdown(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const given = new Promise<void>((resolve) => (timer = setTimeout(resolve, SHUTDOWN_MS)));
    await Promise.race([this.#provider.shutdown().catch(() => {}), given]);
    clearTimeout(timer);
    // Said whether the last exports ended or were given up on: spans still on their way when the process goes are lost too.
    this.#reporting.reportLoss();
  }

  #parentOf(parent: TraceContext | null): Context {
    return parent ? this.#propagator.extract(ROOT_CONTEXT, parent, defaultTextMapGetter) : ROOT_CONTEXT;
  }
}

function tracedProvider(provider: GatewayConfig['providers'][string]): TracedProvider {
  const url = new URL(provider.baseUrl);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { genAiName: genAiProviderName(provider.type), address: url.hostname, port };
}
