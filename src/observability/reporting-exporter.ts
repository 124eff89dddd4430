import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';
import { maskUrl } from '../config/mask-secrets.ts';

export interface ExportLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

/** A collector that stays unreachable is said once this often, not on every batch. */
const REPEAT_AFTER_MS = 60_000;

/**
 * An exporter that tells the operator when spans cannot be delivered: the
 * OpenTelemetry SDK otherwise drops them silently. The first failure is a
 * warning, another only after a minute, and recovery is said once.
 */
export class ReportingExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #log: ExportLogger;
  readonly #endpoint: string;
  #failingSince: number | null = null;
  #lastWarnedAt = 0;
  #dropped = 0;

  constructor(inner: SpanExporter, log: ExportLogger, endpoint: string) {
    this.#inner = inner;
    this.#log = log;
    this.#endpoint = maskUrl(endpoint);
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    this.#inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) this.#succeeded();
      else this.#failed(spans.length, result.error);
      resultCallback(result);
    });
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }

  #failed(spans: number, error: Error | undefined): void {
    const now = Date.now();
    this.#failingSince ??= now;
    this.#dropped += spans;
    if (now - this.#lastWarnedAt < REPEAT_AFTER_MS) return;
    this.#lastWarnedAt = now;
    this.#log.warn({ endpoint: this.#endpoint, dropped_spans: this.#dropped, error: error?.message ?? null }, 'tracing: spans could not be exported');
  }

  #succeeded(): void {
    if (this.#failingSince === null) return;
    this.#log.info({ endpoint: this.#endpoint, dropped_spans: this.#dropped }, 'tracing: exporting spans again');
    this.#failingSince = null;
    this.#lastWarnedAt = 0;
    this.#dropped = 0;
  }
}
