import type { TextFormatParam } from '../protocol/create-response-request.ts';
import type { Provider, TurnRequest } from './provider.ts';
import { RequestRewritingProvider } from './request-rewriting-provider.ts';

/**
 * Structured output for models whose API has none: a provider in front of
 * another, for the models configured with `structuredOutput: "prompt"`. The
 * upstream is sent no `text.format` (which such a server refuses or ignores);
 * the format is spelled out at the end of the instructions instead. Nothing
 * here checks the answer: output validation (engine/controls/) does, and
 * sends a failing answer back to the model.
 */
export class PromptedStructuredOutputProvider extends RequestRewritingProvider {
  constructor(inner: Provider) {
    // Counted as sent: the format in the instructions.
    super(inner, promptedTurnRequest);
  }
}

/** `request` as a model without structured output is sent it: no format, the format's instruction last in the instructions. */
export function promptedTurnRequest(request: TurnRequest): TurnRequest {
  const instruction = answerFormatInstruction(request.textFormat);
  if (instruction === null) return request;
  const instructions = [request.instructions, instruction].filter(Boolean).join('\n\n');
  return { ...request, instructions, textFormat: null };
}

/**
 * Everything the model is told about the answer's format, in one place. It
 * names the final answer only: a model that calls tools in its text
 * (text-tool-calls/) writes those calls as JSON of their own shape.
 */
export function answerFormatInstruction(format: TextFormatParam | null): string | null {
  if (!format || format.type === 'text') return null;
  const scope = 'This is the format of your final answer only; a tool call, if you make one, keeps its own format.';
  const bare = 'Write nothing else: no text before or after it, no explanation, no Markdown, no ``` code fence.';
  if (format.type === 'json_object' || !format.schema) {
    return ['# Answer format', '', `Answer with only one JSON object. ${bare}`, scope].join('\n');
  }
  const lines = ['# Answer format', '', `Answer with only a JSON value that matches the JSON schema below. ${bare}`, scope, ''];
  if (format.name) lines.push(`Schema name: ${format.name}`);
  if (format.description) lines.push(`Description: ${format.description}`);
  lines.push(`JSON schema: ${JSON.stringify(format.schema)}`);
  return lines.join('\n');
}
