import type { Usage } from '../protocol/response-resource.ts';
import { utcDay, type UsageRecord, type UsageStore } from '../store/usage-store.ts';
import type { LoopObserver, ResponseEndedEvent, ResponseRefusedEvent } from './loop-observer.ts';

interface RecorderLogger {
  warn(object: Record<string, unknown>, message: string): void;
  info(object: Record<string, unknown>, message: string): void;
}

/**
 * Usage accounting: adds every response's usage — tokens summed over its
 * model calls, the tool calls the gateway ran — to its tenant's day (UTC, at
 * its end) and model, whatever its transport and however it ended. Writes go
 * on behind the response; a store that is away loses them (one warning per
 * outage), it never fails a response.
 */
export class UsageRecorder implements LoopObserver {
  readonly #store: UsageStore;
  readonly #log: RecorderLogger;
  readonly #now: () => number;
  /** Writes under way, and who waits for them to end (a closing gateway). */
  #writing = 0;
  #idle: (() => void)[] = [];
  #failing = false;

  constructor(options: { store: UsageStore; log: RecorderLogger; now?: () => number }) {
    this.#store = options.store;
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
  }

  responseEnded(event: ResponseEndedEvent): void {
    this.#record(event.tenant, event.model, event.usage, { responses: 1, toolCalls: event.toolCalls });
  }

  /** A response refused at once counts as one, as a failed one does: no tool calls, and the tokens only of a call the upstream billed all the same. */
  responseRefused(event: ResponseRefusedEvent): void {
    this.#record(event.tenant, event.model, event.usage, { responses: 1, toolCalls: 0 });
  }

  /** A compaction's model call: its tokens count, it is no response. */
  compacted(tenant: string, model: string, usage: Usage): void {
    this.#record(tenant, model, usage, { responses: 0, toolCalls: 0 });
  }

  /** Resolves once the writes under way have ended (before the stores close). */
  whenIdle(): Promise<void> {
    if (this.#writing === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  #record(tenant: string, model: string, usage: Usage | null, counts: { responses: number; toolCalls: number }): void {
    const entry: UsageRecord = {
      tenant,
      model,
      day: utcDay(this.#now()),
      responses: counts.responses,
      toolCalls: counts.toolCalls,
      inputTokens: usage?.input_tokens ?? 0,
      outputTokens: usage?.output_tokens ?? 0,
      cachedTokens: usage?.input_tokens_details.cached_tokens ?? 0,
      reasoningTokens: usage?.output_tokens_details.reasoning_tokens ?? 0,
    };
    const write = this.#store.record(entry);
    // One settled handler per write, and a count rather than a set of promises: a response's usage costs one promise here.
    this.#writing++;
    write.then(this.#written, (error: unknown) => this.#failed(error, tenant));
  }

  readonly #written = (): void => {
    if (this.#failing) this.#log.info({}, 'usage: recording works again');
    this.#failing = false;
    this.#settled();
  };

  #failed(error: unknown, tenant: string): void {
    if (!this.#failing) this.#log.warn({ err: error, tenant }, 'usage: a response could not be recorded; usage is lost until the store answers again');
    this.#failing = true;
    this.#settled();
  }

  #settled(): void {
    if (--this.#writing > 0) return;
    const waiting = this.#idle;
    this.#idle = [];
    for (const resolve of waiting) resolve();
  }
}
