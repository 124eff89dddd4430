import { z } from 'zod';
import { jsonTextTooDeep } from './json-depth.ts';
import { REQUEST_LIMITS } from './request-limits.ts';

/**
 * Request fields whose bound is more than a length: a zod issue of code
 * `custom` carrying `params.code` becomes a 400 with that code
 * (parse-request.ts).
 */

/**
 * A JSON Schema (a tool's `parameters`, `text.format.schema`): any object, at
 * most `maxSchemaChars` as JSON text. Measured after the request's depth
 * check, so serialising it here cannot overflow.
 */
export const jsonSchemaObject = z.record(z.string(), z.unknown()).superRefine((schema, context) => {
  const length = JSON.stringify(schema).length;
  if (length <= REQUEST_LIMITS.maxSchemaChars) return;
  context.addIssue({
    code: 'custom',
    message: `schema too large. Expected at most ${REQUEST_LIMITS.maxSchemaChars} characters of JSON, but got ${length} instead`,
    params: { code: 'schema_too_large' },
  });
});

/**
 * A call's `arguments` as the client resends it: JSON text the gateway may
 * parse (for Anthropic's `tool_use.input`, for an MCP call), so it must not
 * nest deeper than the request itself may. Text that is not JSON is left to
 * the upstream, as before.
 */
export const jsonArgumentsText = z
  .string()
  .max(REQUEST_LIMITS.maxTextChars)
  .superRefine((text, context) => {
    if (!jsonTextTooDeep(text, REQUEST_LIMITS.maxJsonDepth)) return;
    context.addIssue({ code: 'custom', message: `the JSON nests objects and arrays more than ${REQUEST_LIMITS.maxJsonDepth} levels deep`, params: { code: 'nesting_too_deep' } });
  });
