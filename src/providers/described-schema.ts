/**
 * A structured answer's schema with the format's `description` (what the
 * answer is for) in it, for upstreams whose format has no field of its own
 * for one (Anthropic's `output_config.format`, Gemini's
 * `responseJsonSchema`): the model reads a schema's description. A
 * description the schema has already stays.
 */
export function describedSchema(schema: Record<string, unknown>, description: string | null | undefined): Record<string, unknown> {
  if (!description || typeof schema.description === 'string') return schema;
  return { description, ...schema };
}
