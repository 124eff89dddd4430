import type { ModelTool } from '../provider.ts';

/**
 * Freeform (`custom`) tools as OpenAI's Responses API takes them natively:
 * offered as `custom` tools with their grammar (so the model's input is
 * constrained by it, as Codex's `apply_patch` expects), their calls and
 * outputs sent back as `custom_tool_call` and `custom_tool_call_output`.
 *
 * The engine knows such a call as a function call whose one argument is
 * its text (protocol/freeform-call.ts); the converter and the translator
 * turn the one into the other at the wire.
 */

/** The model-facing names of the request's freeform tools, offered natively; empty when the upstream takes functions only. */
export function nativeFreeformNames(tools: readonly ModelTool[], native: boolean): ReadonlySet<string> {
  if (!native) return NO_NAMES;
  const names = new Set<string>();
  for (const tool of tools) if (tool.freeform) names.add(tool.name);
  return names;
}

const NO_NAMES: ReadonlySet<string> = new Set();

/** A freeform tool as the Responses API's `custom` tool. */
export function customToolOf(tool: ModelTool & { freeform: NonNullable<ModelTool['freeform']> }): Record<string, unknown> {
  const { description, format } = tool.freeform;
  return { type: 'custom', name: tool.name, ...(description && { description }), ...(format && { format }) };
}
