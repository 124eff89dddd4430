import { serializeResponse } from '../protocol/response-json.ts';
import type { StoredResponse } from './response-store.ts';

/**
 * A stored record as JSON, the same text `JSON.stringify(record)` gives,
 * built around the response's own JSON so the reply can send that string
 * as it is (protocol/response-json.ts) rather than serialize the response
 * a second time.
 */
export function storedRecordJson(record: StoredResponse): string {
  return composeRecord(record, serializeResponse(record.response), JSON.stringify(record.inputItems));
}

/** What a store that indexes turns and items keeps of a record: each item serialized once, the turn and the record built from those pieces. */
export interface StoredRecordParts {
  record: string;
  /** The `ConversationTurn` of the record, as JSON. */
  turn: string;
  /** Each input item's JSON, then each output item's, in order. */
  items: string[];
}

export function storedRecordParts(record: StoredResponse): StoredRecordParts {
  const { response } = record;
  const items: string[] = [];
  for (const item of record.inputItems) items.push(JSON.stringify(item));
  const inputCount = items.length;
  for (const item of response.output) items.push(JSON.stringify(item));
  const inputItems = `[${items.slice(0, inputCount).join(',')}]`;
  const output = `[${items.slice(inputCount).join(',')}]`;
  const turn = `{"responseId":${JSON.stringify(response.id)},"status":${JSON.stringify(response.status)},"inputItems":${inputItems},"output":${output}}`;
  return { record: composeRecord(record, serializeResponse(response), inputItems), turn, items };
}

/** The record's fields in the order `JSON.stringify` writes them (StoredResponse has exactly these). */
function composeRecord(record: StoredResponse, responseJson: string, inputItemsJson: string): string {
  return `{"tenant":${JSON.stringify(record.tenant)},"response":${responseJson},"inputItems":${inputItemsJson},"previousResponseId":${JSON.stringify(record.previousResponseId)}}`;
}
