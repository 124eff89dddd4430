/**
 * A field a Chat Completions server names in its refusal, as the client sent
 * it: the client wrote a Responses request, so `response_format` is its
 * `text.format`, `max_tokens` its `max_output_tokens`; `messages[3]` and
 * `tools[2].function…` count the gateway's own list (instructions, MCP
 * tools), not the client's, so they name the list alone.
 */
const RENAMED: readonly [RegExp, string][] = [
  [/^response_format\.json_schema\.schema(?=$|[.[])/, 'text.format.schema'],
  [/^response_format(?:\.json_schema)?(?=$|[.[])/, 'text.format'],
  [/^max_(?:completion_)?tokens$/, 'max_output_tokens'],
  [/^reasoning_effort$/, 'reasoning.effort'],
  [/^verbosity$/, 'text.verbosity'],
  [/^messages(?:$|[.[].*)/, 'input'],
  [/^tools(?:$|[.[].*)/, 'tools'],
];

export function chatParamAsResponses(param: string): string {
  for (const [pattern, name] of RENAMED) if (pattern.test(param)) return param.replace(pattern, name);
  return param;
}
