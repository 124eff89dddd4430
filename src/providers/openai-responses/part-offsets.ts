import type { TextAnnotation } from '../../protocol/output-items.ts';

/**
 * Where each `output_text` part of an upstream message starts in the one
 * text the gateway makes of them. OpenAI counts a citation's offsets within
 * its own part; the gateway joins a message's parts, so a citation in a later
 * part is moved by the length of the parts before it, or it would point at
 * other words.
 */
export class MessagePartOffsets {
  /** By the upstream's item id: each part's start, by content index, and the text so far. */
  readonly #items = new Map<string, { starts: number[]; length: number }>();

  /** A streamed delta of part `contentIndex` of the item. */
  text(itemId: string, contentIndex: number, delta: string): void {
    const item = this.#item(itemId);
    item.starts[contentIndex] ??= item.length;
    item.length += delta.length;
  }

  /** Where part `contentIndex` of the item starts in the joined text (0 for one not seen). */
  startOf(itemId: string, contentIndex: number): number {
    return this.#items.get(itemId)?.starts[contentIndex] ?? 0;
  }

  #item(itemId: string): { starts: number[]; length: number } {
    let item = this.#items.get(itemId);
    if (!item) this.#items.set(itemId, (item = { starts: [], length: 0 }));
    return item;
  }
}

/** The annotation with its offsets moved `by` characters (start and end of a span, or the single `index` of a file citation). */
export function shiftAnnotation(annotation: TextAnnotation, by: number): TextAnnotation {
  if (by === 0) return annotation;
  const shifted: TextAnnotation = { ...annotation };
  for (const field of ['start_index', 'end_index', 'index'] as const) {
    const value = annotation[field];
    if (typeof value === 'number') shifted[field] = value + by;
  }
  return shifted;
}
