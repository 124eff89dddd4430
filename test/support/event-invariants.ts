import { expect } from 'vitest';
import { assertValidEvent } from './openresponses-schema.ts';

type AnyEvent = Record<string, any> & { type: string; sequence_number: number };

const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete']);
const BROKEN_OFF_ITEMS = new Set(['function_call', 'custom_tool_call', 'message', 'reasoning', 'web_search_call', 'file_search_call', 'code_interpreter_call', 'image_generation_call']);
const LIFECYCLE = new Set(['response.created', 'response.in_progress', ...TERMINAL]);

/**
 * Checks one response's event sequence against the schema and against every
 * ordering rule of PROTOCOL-NOTES §1 that the OpenAI SDK depends on. Returns
 * the terminal event's response. `validate` checks each event (the default:
 * the OpenResponses schema alone).
 */
export function assertEventStreamInvariants(events: AnyEvent[], validate: (event: unknown) => void = assertValidEvent): Record<string, any> {
  for (const event of events) validate(event);
  expect(events.length).toBeGreaterThanOrEqual(3);
  events.forEach((event, index) => expect(event.sequence_number, `sequence_number of event ${index}`).toBe(index));

  expect(events[0]!.type).toBe('response.created');
  expect(events[0]!.response.output).toEqual([]);
  expect(events[1]!.type).toBe('response.in_progress');
  const terminals = events.filter((event) => TERMINAL.has(event.type));
  expect(terminals).toHaveLength(1);
  expect(events.at(-1)).toBe(terminals[0]);

  const responseId = events[0]!.response.id;
  for (const event of events.filter((candidate) => LIFECYCLE.has(candidate.type))) {
    expect(event.response.id).toBe(responseId);
    expect(event.response).not.toHaveProperty('output_text');
  }

  const added = new Map<number, any>();
  const done = new Map<number, any>();
  const parts = new Map<string, { open: boolean; text: string }>();
  const args = new Map<string, string>();
  const itemIds = new Set<string>();
  for (const event of events) {
    if (event.type === 'response.output_item.added') {
      expect(event.output_index, 'output_index is the next free index').toBe(added.size);
      expect(event.item.id).toBeTruthy();
      expect(itemIds.has(event.item.id), 'item ids are unique').toBe(false);
      itemIds.add(event.item.id);
      if (event.item.type === 'function_call') expect(event.item.call_id).toBeTruthy();
      added.set(event.output_index, event.item);
      continue;
    }
    if (event.type === 'response.output_item.done') {
      const item = added.get(event.output_index);
      expect(item, 'done follows added').toBeDefined();
      expect(done.has(event.output_index)).toBe(false);
      expect(event.item.id).toBe(item.id);
      expect(event.item.type).toBe(item.type);
      if (item.type === 'function_call') {
        expect(event.item.call_id).toBe(item.call_id);
        expect(event.item.arguments).toBe(args.get(item.id) ?? '');
      }
      if (item.type === 'message') {
        event.item.content.forEach((part: any, contentIndex: number) => {
          const streamed = parts.get(`${item.id}:${contentIndex}`);
          expect(streamed?.open, 'parts are done before their item').toBe(false);
          expect(part.text ?? part.refusal).toBe(streamed?.text);
        });
      }
      done.set(event.output_index, event.item);
      continue;
    }
    if ('item_id' in event) {
      const item = added.get(event.output_index);
      expect(item, `${event.type} after its item was added`).toBeDefined();
      expect(event.item_id).toBe(item.id);
      expect(done.has(event.output_index), `${event.type} before its item is done`).toBe(false);
      const key = `${event.item_id}:${event.content_index}`;
      if (event.type === 'response.content_part.added') {
        expect(parts.has(key)).toBe(false);
        parts.set(key, { open: true, text: '' });
      } else if (event.type === 'response.output_text.delta' || event.type === 'response.refusal.delta') {
        expect(parts.get(key)?.open, 'content part added before its deltas').toBe(true);
        parts.get(key)!.text += event.delta;
      } else if (event.type === 'response.output_text.done' || event.type === 'response.refusal.done') {
        expect(event.text ?? event.refusal).toBe(parts.get(key)?.text);
      } else if (event.type === 'response.content_part.done') {
        parts.get(key)!.open = false;
      } else if (event.type === 'response.function_call_arguments.delta') {
        args.set(event.item_id, (args.get(event.item_id) ?? '') + event.delta);
      } else if (event.type === 'response.function_call_arguments.done') {
        expect(event.arguments).toBe(args.get(event.item_id) ?? '');
      }
    }
  }
  const terminal = terminals[0]!;
  const final = terminal.response;
  expect(final.output, 'terminal event carries every item added').toHaveLength(added.size);
  final.output.forEach((item: any, index: number) => {
    if (done.has(index)) return expect(item, 'terminal event carries the items as done').toEqual(done.get(index));
    // What the model was writing when its turn broke off is never done, so that no client takes it for finished: it ends
    // incomplete (reasoning has no status), its response not completed.
    expect(BROKEN_OFF_ITEMS.has(item.type), `item ${index} (${item.type}) is done`).toBe(true);
    if (item.type !== 'reasoning') expect(item.status).toBe('incomplete');
    expect(terminal.type).not.toBe('response.completed');
    if (item.type === 'function_call') expect(item.arguments).toBe(args.get(item.id) ?? '');
    if (item.type === 'message') item.content.forEach((part: any, contentIndex: number) => expect(part.text ?? part.refusal).toBe(parts.get(`${item.id}:${contentIndex}`)?.text));
  });
  return final;
}

/** Splits raw SSE text into parsed events (and checks the `event:` line matches `data.type`). */
export function parseSseText(text: string): { events: AnyEvent[]; done: boolean } {
  expect(text.includes('\r'), 'LF line endings only').toBe(false);
  const events: AnyEvent[] = [];
  let done = false;
  for (const block of text.split('\n\n')) {
    if (!block.trim() || block.startsWith(':')) continue;
    const lines = block.split('\n');
    const data = lines.filter((line) => line.startsWith('data: ')).map((line) => line.slice(6));
    expect(data, 'one data line per event').toHaveLength(1);
    if (data[0] === '[DONE]') {
      done = true;
      continue;
    }
    const event = JSON.parse(data[0]!) as AnyEvent;
    const name = lines.find((line) => line.startsWith('event: '))?.slice(7);
    expect(name).toBe(event.type);
    events.push(event);
  }
  return { events, done };
}
