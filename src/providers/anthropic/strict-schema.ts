/**
 * A JSON Schema as Claude's constrained decoding takes it (structured
 * outputs, `strict` tools). Claude refuses keywords it cannot enforce —
 * numeric bounds, string lengths, `minItems` above 1, most string formats —
 * where OpenAI accepts them, and the OpenAI SDK's zod helpers emit them
 * (`z.number().int()` is a `minimum` and a `maximum`). Such a keyword is
 * not dropped: it moves into the description, where the model still reads
 * it. Objects are closed (`additionalProperties: false`), as Claude
 * requires; `oneOf` becomes `anyOf`.
 */
export function claudeStrictSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return transform(schema);
}

const STRING_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid']);

/** Keywords Claude takes on any schema. */
const KEPT = new Set(['type', 'description', 'title', 'enum', 'const', 'default', 'required', '$ref']);
/** Keywords that only name, and constrain nothing: left out. */
const DROPPED = new Set(['$schema', '$id', '$comment']);

function transform(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value as Record<string, unknown>;
  const schema = value as Record<string, unknown>;
  const strict: Record<string, unknown> = {};
  const described: string[] = [];
  for (const [key, keyword] of Object.entries(schema)) {
    if (DROPPED.has(key)) continue;
    if (KEPT.has(key)) strict[key] = keyword;
    else if (key === 'properties' && isRecord(keyword)) strict.properties = mapValues(keyword, transform);
    else if ((key === '$defs' || key === 'definitions') && isRecord(keyword)) strict[key] = mapValues(keyword, transform);
    else if (key === 'items' && isRecord(keyword)) strict.items = transform(keyword);
    else if ((key === 'anyOf' || key === 'oneOf') && Array.isArray(keyword)) strict.anyOf = keyword.map(transform);
    else if (key === 'allOf' && Array.isArray(keyword)) strict.allOf = keyword.map(transform);
    else if (key === 'additionalProperties') {
      if (keyword !== false) described.push(`${key}: ${JSON.stringify(keyword)}`);
    } else if (key === 'format' && typeof keyword === 'string' && STRING_FORMATS.has(keyword)) strict.format = keyword;
    else if (key === 'minItems' && (keyword === 0 || keyword === 1)) strict.minItems = keyword;
    else described.push(`${key}: ${JSON.stringify(keyword)}`);
  }
  if (isObjectSchema(schema)) strict.additionalProperties = false;
  if (described.length > 0) strict.description = [typeof strict.description === 'string' ? strict.description : '', `{${described.join(', ')}}`].filter(Boolean).join('\n\n');
  return strict;
}

function isObjectSchema(schema: Record<string, unknown>): boolean {
  return schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object'));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function mapValues(record: Record<string, unknown>, map: (value: unknown) => Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)]));
}
