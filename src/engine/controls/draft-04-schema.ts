/**
 * A draft-04 JSON schema as draft-07 writes the same rules, for the draft-07
 * compiler (Ajv has no draft-04): `id` is `$id`, and `exclusiveMinimum` /
 * `exclusiveMaximum`, booleans beside `minimum` / `maximum` there, are the
 * bounds themselves from draft-06 on. Everything else reads the same.
 */
export function fromDraft04(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(fromDraft04);
  if (schema === null || typeof schema !== 'object') return schema;
  const source = schema as Record<string, unknown>;
  const converted: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    // `properties`, `definitions` and the like hold names, not keywords: their values are schemas, their keys stay.
    if (DATA.has(key)) converted[key] = value;
    else if (key === 'id' && typeof value === 'string') converted.$id = value;
    else if ((key === 'exclusiveMinimum' || key === 'exclusiveMaximum') && typeof value === 'boolean') continue;
    else converted[key] = NAMES_SCHEMAS.has(key) && value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, fromDraft04(inner)])) : fromDraft04(value);
  }
  for (const [flag, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (source[flag] === true && typeof source[bound] === 'number') {
      converted[flag] = source[bound];
      delete converted[bound];
    }
  }
  return converted;
}

/** Keywords whose value is an instance, not a schema: left as written. */
const DATA = new Set(['enum', 'const', 'default', 'examples']);

/** Keywords whose value maps names to schemas. */
const NAMES_SCHEMAS = new Set(['properties', 'patternProperties', 'definitions', 'dependencies']);
