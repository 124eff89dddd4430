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
 * An exporter that tells the operator when spans are lost: the OpenTelemetry
 * SDK otherwise drops them silently — in batches whose export failed, and
 * (`queueFull`) before export, when its queue is full behind a collector too
 * slow or hung for the spans coming in. The first loss of each kind is a
 * warning (a full queue is heard of before the export that hangs fails, and
 * that failure says why), another of the kind only after a minute, each with
 * the spans lost so far; the recovery of failing exports is said once, and
 * spans lost since the last line (those still on their way included) are
 * said at shutdown (`reportLoss`).
 */
export class ReportingExporter implements SpanExporter {
  readonly #inner: SpanExporter;
  readonly #log: ExportLogger;
  readonly #endpoint: string;
  #failingSince: number | null = null;
  /** When exports were said to work again: a slow export sent before then that fails late belongs to the outage already told. */
  #recoveredAt = -Infinity;
  /** When each kind of loss was last said. */
  readonly #lastWarnedAt = new Map<string, number>();
  #dropped = 0;
  /** `#dropped` as the last line said it. */
  #droppedSaid = 0;
  /** Spans handed to exports that have not answered yet. */
  #inFlight = 0;

  constructor(inner: SpanExporter, log: ExportLogger, endpoint: string) {
    this.#inner = inner;
    this.#log = log;
    this.#endpoint = maskUrl(endpoint);
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    const sentAt = performance.now();
    this.#inFlight += spans.length;
    this.#inner.export(spans, (result) => {
      this.#inFlight -= spans.length;
      if (result.code === ExportResultCode.SUCCESS) this.#succeeded();
      else this.#failed(spans.length, result.error, sentAt);
      resultCallback(result);
    });
  }

  /** Spans the batch processor dropped before export, its queue full (span-queue-drops.ts). */
  queueFull(spans: number): void {
    this.#dropped += spans;
    this.#warn('tracing: spans dropped, the export queue is full (the collector is slow or does not answer)', null);
  }

  shutdown(): Promise<void> {
    return this.#inner.shutdown();
  }

  /**
   * At shutdown, once the last exports ended or were given up on: the spans
   * lost since the last line said so (within its minute, in the final flush,
   * or still on their way), if any.
   */
  reportLoss(): void {
    const lost = this.#dropped + this.#inFlight;
    if (lost > this.#droppedSaid) this.#log.warn({ endpoint: this.#endpoint, dropped_spans: lost }, 'tracing: spans lost before shutdown');
  }

  forceFlush(): Promise<void> {
    return this.#inner.forceFlush?.() ?? Promise.resolve();
  }

  #failed(spans: number, error: Error | undefined, sentAt: number): void {
    this.#dropped += spans;
    // Sent before the recovery was said, failing only now: the outage told already, not a new one.
    if (sentAt < this.#recoveredAt) return;
    this.#failingSince ??= performance.now();
    this.#warn('tracing: spans could not be exported', error?.message ?? null);
  }

  #warn(message: string, error: string | null): void {
    const now = performance.now();
    if (now - (this.#lastWarnedAt.get(message) ?? -Infinity) < REPEAT_AFTER_MS) return;
    this.#lastWarnedAt.set(message, now);
    this.#droppedSaid = this.#dropped;
    this.#log.warn({ endpoint: this.#endpoint, dropped_spans: this.#dropped, ...(error !== null && { error }) }, message);
  }

  #succeeded(): void {
    if (this.#failingSince === null) return;
    this.#log.info({ endpoint: this.#endpoint, dropped_spans: this.#dropped }, 'tracing: exporting spans again');
    this.#failingSince = null;
    this.#recoveredAt = performance.now();
    this.#lastWarnedAt.clear();
    this.#dropped = 0;
    this.#droppedSaid = 0;
  }
}
