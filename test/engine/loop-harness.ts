import { ResponseEngine } from '../../src/engine/response-engine.ts';
import type { LoopObserver, ResponseObserverFactory } from '../../src/engine/loop-observer.ts';
import type { LoopLimits } from '../../src/engine/response-loop.ts';
import { ExecutorRegistry } from '../../src/executors/executor-registry.ts';
import type { ToolGovernance } from '../../src/executors/tool-governance.ts';
import type { ToolExecutor } from '../../src/executors/tool-executor.ts';
import { CreateResponseRequest } from '../../src/protocol/create-response-request.ts';
import { ModelRouter } from '../../src/providers/model-router.ts';
import type { Provider } from '../../src/providers/provider.ts';
import { MemoryResponseStore } from '../../src/store/memory-response-store.ts';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { assertValidResponse } from '../support/openresponses-schema.ts';

export interface Harness {
  engine: ResponseEngine;
  store: MemoryResponseStore;
  /** Runs one request to its end; every event and the response are checked against the schema and the ordering rules. */
  run(body: Record<string, unknown>, options?: { signal?: AbortSignal; observers?: LoopObserver[] }): Promise<{ events: any[]; response: any }>;
}

/** `shared.store` lets two harnesses (say, before and after a policy change) continue each other's responses. */
export function harness(
  provider: Provider,
  executors: ToolExecutor[] = [],
  limits: Partial<LoopLimits & { deadlineMs: number }> = {},
  shared: { store?: MemoryResponseStore; governance?: ToolGovernance; responseObservers?: ResponseObserverFactory[] } = {},
): Harness {
  const store = shared.store ?? new MemoryResponseStore({ maxEntries: 1_000, ttlSeconds: 600 });
  const engine = new ResponseEngine({
    router: new ModelRouter(new Map([['scripted', provider]]), {}, 'scripted'),
    store,
    executors: new ExecutorRegistry(executors, shared.governance),
    limits: { maxTurns: 10, toolTimeoutMs: 5_000, deadlineMs: 30_000, maxConsecutiveToolFailures: 0, pausedStatus: 'requires_action', ...limits },
    defaultModel: 'm',
    ...(shared.responseObservers && { responseObservers: shared.responseObservers }),
  });
  return {
    engine,
    store,
    async run(body, options = {}) {
      const request = CreateResponseRequest.parse(body);
      const run = await engine.createResponse(request, { tenant: 't', signal: options.signal ?? new AbortController().signal, observers: options.observers ?? [] });
      const events: any[] = [];
      for await (const batch of run.events) for (const event of batch) events.push(JSON.parse(JSON.stringify(event)));
      const response = assertEventStreamInvariants(events);
      assertValidResponse(response);
      return { events, response };
    },
  };
}

export const fn = (name: string) => ({ type: 'function' as const, name, parameters: { type: 'object' }, strict: false });
export const types = (response: any) => response.output.map((item: any) => item.type);
