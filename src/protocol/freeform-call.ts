import { jsonStringField } from '../util/json-string-field.ts';

/**
 * A freeform (`custom`) tool's call as the gateway holds it: a call of the
 * function the tool is offered as to models that only know functions, whose
 * one argument, `input`, is the raw text (engine/declared-tools.ts).
 * Upstreams that take freeform tools natively, and clients, see the text.
 */
export function freeformArguments(input: string): string {
  return JSON.stringify({ input });
}

/** The text of a freeform call; arguments of another shape (the model wrote them so) are taken as the text. */
export function freeformInput(argumentsJson: string): string {
  return jsonStringField(argumentsJson, 'input') ?? argumentsJson;
}
