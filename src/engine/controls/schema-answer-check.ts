import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv as AjvDraft07 } from 'ajv';
import { invalidRequest } from '../../errors/gateway-error.ts';
import type { TextFormatParam } from '../../protocol/create-response-request.ts';
import type { AnswerCheck } from './answer-check.ts';
import { fromDraft04 } from './draft-04-schema.ts';

const MAX_PROBLEMS = 20;
const CACHED_SCHEMAS = 256;

// One compiler per dialect for every request: compiling is the expensive part, so validators are kept by schema text.
const ajvOptions = { strict: false, allErrors: true, validateFormats: false };
const ajv2020 = new Ajv2020(ajvOptions);
// Draft-07 has its own compiler (the dialects cannot share one): it is what zod's JSON schemas, and so the
// OpenAI SDK's zodTextFormat, declare in `$schema`; 2019-09 has its own too.
const ajvDraft07 = new AjvDraft07(ajvOptions);
const ajv2019 = new Ajv2019(ajvOptions);
const compiled = new Map<string, ValidateFunction>();

/**
 * The check `text.format` implies: `json_schema` answers must parse and
 * match the schema, `json_object` answers must parse as an object; plain text
 * has nothing to check (null). A schema Ajv cannot compile is the client's
 * error, a 400 on `text.format.schema` before anything runs.
 */
export function schemaAnswerCheck(format: TextFormatParam | null): AnswerCheck | null {
  if (!format || format.type === 'text') return null;
  if (format.type === 'json_object') {
    return { name: 'json_object', problems: async ({ text }) => parsedObjectProblems(text) };
  }
  if (!format.schema) return null;
  const validate = compile(format.schema);
  return {
    name: 'json_schema',
    async problems({ text }) {
      const parsed = parse(text);
      if (!parsed.ok) return [parsed.problem];
      if (validate(parsed.value)) return [];
      return (validate.errors ?? []).slice(0, MAX_PROBLEMS).map((error) => `${error.instancePath || '(the answer)'} ${error.message ?? 'is invalid'}${describeParams(error.params)}`);
    },
  };
}

function compile(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  const known = compiled.get(key);
  if (known) {
    // Most recently used last: the map's order is the eviction order.
    compiled.delete(key);
    compiled.set(key, known);
    return known;
  }
  let validate: ValidateFunction | null = null;
  let failure: unknown = null;
  const { $schema: dialect, ...written } = schema;
  // Without `$schema`: the compiler is chosen by it, and Ajv knows each dialect under one spelling only (`http://…draft-07/schema#`).
  const body = isDraft04(dialect) ? (fromDraft04(written) as Record<string, unknown>) : written;
  for (const ajv of compilersFor(dialect)) {
    try {
      validate = ajv.compile(body);
      break;
    } catch (error) {
      failure ??= error;
    } finally {
      // The compiler registers every schema it compiles (by object and by `$id`) for good; the validator keeps
      // working without that. Registered, a second schema with the same `$id` was refused, one request's schema
      // could be reached by another's `$ref`, and evicting a validator from the cache here freed nothing.
      ajv.removeSchema(body);
    }
  }
  if (!validate) throw invalidRequest(`The JSON schema in text.format cannot be used to validate answers: ${failure instanceof Error ? failure.message : String(failure)}`, 'text.format.schema', 'invalid_json_schema');
  compiled.set(key, validate);
  if (compiled.size > CACHED_SCHEMAS) compiled.delete(compiled.keys().next().value!);
  return validate;
}

/**
 * The compilers to read a schema by, in order, from the dialect its
 * `$schema` names (either scheme, with or without the trailing `#`): 2020-12
 * when it names none, then draft-07 for a schema written the older way
 * (`items` as a list); draft-07 for drafts 4 and 6 too, the nearest Ajv has.
 */
function isDraft04(dialect: unknown): boolean {
  return typeof dialect === 'string' && /^https?:\/\/json-schema\.org\/draft-04\/schema#?$/.test(dialect);
}

function compilersFor(dialect: unknown): (Ajv2020 | Ajv2019 | AjvDraft07)[] {
  const named = typeof dialect === 'string' ? dialect.replace(/^https?:\/\//, '').replace(/#$/, '') : null;
  if (named === null) return [ajv2020, ajvDraft07];
  if (named === 'json-schema.org/draft/2020-12/schema') return [ajv2020];
  if (named === 'json-schema.org/draft/2019-09/schema') return [ajv2019];
  return [ajvDraft07];
}

function parse(text: string): { ok: true; value: unknown } | { ok: false; problem: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, problem: `The answer is not valid JSON (${error instanceof Error ? error.message : String(error)}).` };
  }
}

function parsedObjectProblems(text: string): string[] {
  const parsed = parse(text);
  if (!parsed.ok) return [parsed.problem];
  const value = parsed.value;
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? [] : ['The answer must be a JSON object.'];
}

function describeParams(params: Record<string, unknown>): string {
  if ('additionalProperty' in params) return ` ('${String(params.additionalProperty)}')`;
  if ('allowedValues' in params) return `: ${JSON.stringify(params.allowedValues)}`;
  return '';
}
