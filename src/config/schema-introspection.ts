import type { z } from 'zod';
import { isPlainObject, type ConfigPath } from './config-problem.ts';

/**
 * Reads the configuration's zod schema itself, so that messages, unknown-key
 * checks and `--help` follow the schema as it changes instead of a copy of it.
 */

/** The parts of a zod definition this module reads. */
interface SchemaDefinition {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  discriminator?: string;
  entries?: Record<string, string | number>;
  values?: unknown[];
  format?: string;
  checks?: { _zod: { def: { check: string; value?: number; inclusive?: boolean; minimum?: number } } }[];
}

function definitionOf(schema: z.ZodType): SchemaDefinition {
  return schema._zod.def as unknown as SchemaDefinition;
}

/** The schema that validates values, past defaults, nullability and preprocessing. */
export function unwrapSchema(schema: z.ZodType): z.ZodType {
  for (;;) {
    const definition = definitionOf(schema);
    if (definition.innerType && ['default', 'prefault', 'optional', 'nullable', 'readonly', 'catch', 'nonoptional'].includes(definition.type)) {
      schema = definition.innerType;
    } else if (definition.type === 'pipe' && definition.in && definition.out) {
      // z.preprocess(fn, schema) validates with `out`; schema.transform(fn) with `in`.
      schema = definitionOf(definition.out).type === 'transform' ? definition.in : definition.out;
    } else {
      return schema;
    }
  }
}

/** The object schema of a discriminated union that a raw value selects, if any. */
function selectOption(definition: SchemaDefinition, raw: unknown): z.ZodType | null {
  if (!definition.discriminator || !definition.options || !isPlainObject(raw)) return null;
  const tag = raw[definition.discriminator];
  for (const option of definition.options) {
    const discriminator = definitionOf(unwrapSchema(option)).shape?.[definition.discriminator];
    const allowed = discriminator ? definitionOf(unwrapSchema(discriminator)).values : undefined;
    if (allowed?.includes(tag)) return unwrapSchema(option);
  }
  return null;
}

/** The schema validating the value at `path` (`raw` chooses among union options), or null. */
export function schemaAt(schema: z.ZodType, path: ConfigPath, raw: unknown): z.ZodType | null {
  let current = unwrapSchema(schema);
  let value = raw;
  for (const segment of path) {
    const definition = definitionOf(current);
    let next: z.ZodType | undefined | null;
    if (definition.type === 'object') next = definition.shape?.[segment];
    else if (definition.type === 'array') next = definition.element;
    else if (definition.type === 'record') next = definition.valueType;
    else if (definition.type === 'union') {
      const option = selectOption(definition, value);
      next = option ? definitionOf(option).shape?.[segment] : null;
    }
    if (!next) return null;
    current = unwrapSchema(next);
    value = isPlainObject(value) || Array.isArray(value) ? (value as Record<string | number, unknown>)[segment] : undefined;
  }
  return current;
}

/** What a value must be, in words ("an integer from 0 to 65535"), or null when the schema says nothing plain. */
export function describeSchema(schema: z.ZodType | null): string | null {
  if (!schema) return null;
  if (schema.description) return schema.description;
  const definition = definitionOf(schema);
  switch (definition.type) {
    case 'number':
      return describeNumber(definition);
    case 'enum':
      return `one of ${Object.values(definition.entries ?? {}).join(', ')}`;
    case 'literal':
      return (definition.values ?? []).map((value) => JSON.stringify(value)).join(' or ');
    case 'boolean':
      return 'true or false';
    case 'union':
      return describeUnion(definition);
    case 'array':
      return 'a list';
    case 'object':
    case 'record':
      return 'an object';
    case 'string':
      return 'a string';
    default:
      return null;
  }
}

function describeNumber(definition: SchemaDefinition): string {
  const noun = definition.format === 'safeint' || definition.format === 'int32' ? 'integer' : 'number';
  let lower: { value: number; inclusive: boolean } | null = null;
  let upper: number | null = null;
  for (const check of definition.checks ?? []) {
    const { check: kind, value, inclusive } = check._zod.def;
    if (kind === 'greater_than' && value !== undefined) lower = { value, inclusive: inclusive ?? false };
    if (kind === 'less_than' && value !== undefined) upper = inclusive ? value : value - 1;
  }
  if (lower && !lower.inclusive && lower.value === 0 && upper === null) return `a positive ${noun}`;
  const from = lower ? (lower.inclusive ? lower.value : lower.value + 1) : null;
  if (from !== null && upper !== null) return `an ${noun} from ${from} to ${upper}`;
  if (from !== null) return `an ${noun} of at least ${from}`;
  if (upper !== null) return `an ${noun} of at most ${upper}`;
  return `an ${noun}`;
}

function describeUnion(definition: SchemaDefinition): string | null {
  const parts = (definition.options ?? []).map((option) => describeSchema(unwrapSchema(option)));
  return parts.every((part) => part !== null) ? parts.join(' or ') : null;
}

export interface UnknownKey {
  /** Path of the unknown key itself. */
  path: ConfigPath;
  /** The known key it most likely meant, if one is close. */
  suggestion: string | null;
}

/** Every key in `raw` that the schema does not know (zod would drop it silently). */
export function findUnknownKeys(schema: z.ZodType, raw: unknown, path: ConfigPath = []): UnknownKey[] {
  const current = unwrapSchema(schema);
  const definition = definitionOf(current);
  const found: UnknownKey[] = [];
  if (definition.type === 'object' && isPlainObject(raw)) {
    const shape = definition.shape ?? {};
    for (const [key, value] of Object.entries(raw)) {
      const known = shape[key];
      if (known) found.push(...findUnknownKeys(known, value, [...path, key]));
      else found.push({ path: [...path, key], suggestion: closestKey(key, Object.keys(shape)) });
    }
  } else if (definition.type === 'array' && Array.isArray(raw) && definition.element) {
    raw.forEach((item, index) => found.push(...findUnknownKeys(definition.element!, item, [...path, index])));
  } else if (definition.type === 'record' && isPlainObject(raw) && definition.valueType) {
    for (const [key, value] of Object.entries(raw)) found.push(...findUnknownKeys(definition.valueType, value, [...path, key]));
  } else if (definition.type === 'union') {
    const option = selectOption(definition, raw);
    if (option) found.push(...findUnknownKeys(option, raw, path));
  }
  return found;
}

/**
 * The known key closest to a misspelt one: same letters ignoring case and
 * separators, or at most `tolerance` edits away (by default a third of its
 * length).
 */
export function closestKey(key: string, known: readonly string[], tolerance?: (normalizedLength: number) => number): string | null {
  const normalize = (text: string) => text.toLowerCase().replace(/[-_]/g, '');
  const target = normalize(key);
  let best: { key: string; distance: number } | null = null;
  for (const candidate of known) {
    const distance = editDistance(target, normalize(candidate));
    if (!best || distance < best.distance) best = { key: candidate, distance };
  }
  const allowed = tolerance ? tolerance(target.length) : Math.max(1, Math.floor(target.length / 3));
  return best && best.distance <= allowed ? best.key : null;
}

/** Edit distance counting a swap of neighbours as one edit (optimal string alignment), so "prot" is one from "port". */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[a.length]![b.length]!;
}
