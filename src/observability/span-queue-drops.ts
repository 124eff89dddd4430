import { createNoopMeter, type Counter, type Meter, type MeterProvider, type MetricAttributes } from '@opentelemetry/api';

/**
 * Hears the spans the SDK's batch processor drops because its queue is full
 * — a collector too slow or hung for the spans coming in, whose exports have
 * not failed yet (or never do) — which it says only on its self-observability
 * metric (`otel.sdk.processor.span.processed`, `error.type` `queue_full`).
 * Given as the processor's `selfObsMeterProvider`; every other instrument is
 * a no-op.
 */
export function spanQueueDrops(onDropped: (count: number) => void): MeterProvider {
  const noop = createNoopMeter();
  const meter: Meter = Object.assign(Object.create(noop) as Meter, {
    createCounter: (): Counter => ({
      add: (value: number, attributes?: MetricAttributes) => {
        if (attributes?.['error.type'] === 'queue_full') onDropped(value);
      },
    }),
  });
  return { getMeter: () => meter };
}
