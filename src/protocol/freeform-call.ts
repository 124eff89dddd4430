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
  return jsonStringField(argumentsJson, 'input') ?? inputSoFar(argumentsJson) ?? argumentsJson;
}

/**
 * The text so far of arguments cut off inside their `input` string (a call
 * whose turn broke off): `{"input":"*** Beg` is `*** Beg`. An escape cut in
 * two (a lone backslash, a partial `\u`) is left out; null for any other shape.
 */
function inputSoFar(argumentsJson: string): string | null {
  const opening = /^\s*\{\s*"input"\s*:\s*"/.exec(argumentsJson);
  if (!opening) return null;
  let text = argumentsJson.slice(opening[0].length);
  const cutEscape = /(\\+)(u[0-9a-fA-F]{0,3})?$/.exec(text);
  if (cutEscape && cutEscape[1]!.length % 2 === 1) text = text.slice(0, cutEscape.index + cutEscape[1]!.length - 1);
  try {
    return JSON.parse(`"${text}"`) as string;
  } catch {
    return null;
  }
}
