import type { LoopObserver, ObservedResponse } from '../../engine/loop-observer.ts';
import { canSee, type InspectorResponse, type InspectorTimeline, type InspectorViewer } from './inspector-views.ts';
import { ResponseRecord } from './response-record.ts';

/**
 * The responses this replica ran lately, newest last, at most `capacity`:
 * the oldest goes when a new one starts (running or not — memory is bounded
 * either way). Each replica keeps its own; nothing here is shared.
 */
export class RecentResponses {
  readonly #capacity: number;
  /** Insertion order is start order. */
  readonly #records = new Map<string, ResponseRecord>();

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** The engine's factory (`responseObservers`): one record per response. */
  readonly observe = (response: ObservedResponse): LoopObserver => new ResponseRecord(response, (record) => this.#add(record));

  /** Newest first, as `viewer` may see them. */
  list(viewer: InspectorViewer, limit: number): InspectorResponse[] {
    const seen: InspectorResponse[] = [];
    for (const record of [...this.#records.values()].reverse()) {
      if (seen.length >= limit) break;
      if (canSee(viewer, record.tenant)) seen.push(record.summary());
    }
    return seen;
  }

  /** The response's timeline, or null when this replica has none `viewer` may see. */
  timeline(viewer: InspectorViewer, id: string): InspectorTimeline | null {
    const record = this.#records.get(id);
    return record && canSee(viewer, record.tenant) ? record.timeline() : null;
  }

  /** The tenant of a response this replica remembers, if `viewer` may see it. */
  tenantOf(viewer: InspectorViewer, id: string): string | null {
    const record = this.#records.get(id);
    return record && canSee(viewer, record.tenant) ? record.tenant : null;
  }

  #add(record: ResponseRecord): void {
    this.#records.set(record.id, record);
    if (this.#records.size <= this.#capacity) return;
    const oldest = this.#records.keys().next().value!;
    this.#records.delete(oldest);
  }
}
