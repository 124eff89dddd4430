/**
 * A field a Chat Completions server names in its refusal, as the client sent
 * it: the client wrote a Responses request, so `response_format` is its
 * `text.format`, `max_tokens` its `max_output_tokens`. Places in `messages`
 * and `tools` stay as the server said them: the engine reads `tools[N]` to
 * tell a refusal of an MCP server's tool from one of the client's
 * (engine/offered-tool-refusals.ts).
 */
const RENAMED: readonly [RegExp, string][] = [
  [/^response_format\.json_schema\.schema(?=$|[.[])/, 'text.format.schema'],
  [/^response_format(?:\.json_schema)?(?=$|[.[])/, 'text.format'],
  [/^max_(?:completion_)?tokens$/, 'max_output_tokens'],
  [/^reasoning_effort$/, 'reasoning.effort'],
  [/^verbosity$/, 'text.verbosity'],
];

export function chatParamAsResponses(param: string): string {
  for (const [pattern, name] of RENAMED) if (pattern.test(param)) return param.replace(pattern, name);
  return param;
}
