import { serializeResponse } from '../protocol/response-json.ts';
import type { StoredResponse } from './response-store.ts';

/**
 * What a store that indexes turns and items keeps of a record: the record as
 * `JSON.stringify` writes it, its turn and each item, with each item
 * serialized once and the rest built from those pieces. The response's own
 * JSON is kept for the reply to send as it is (protocol/response-json.ts).
 */
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
