import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/**
 * Validators compiled from the official OpenResponses schema in `openapi/`.
 * Every response and streamed event the end-to-end tests see goes through them.
 */
const document = JSON.parse(readFileSync(new URL('../../openapi/openresponses.json', import.meta.url), 'utf8')) as {
  components: { schemas: Record<string, unknown> };
};

const ajv = new Ajv2020({ strict: false, allErrors: true, discriminator: false });
const addFormats = addFormatsModule as unknown as (instance: Ajv2020) => void;
addFormats(ajv);
ajv.addSchema({ $id: 'openresponses', components: document.components });

const cache = new Map<string, ValidateFunction>();
function validator(name: string): ValidateFunction {
  let validate = cache.get(name);
  if (!validate) {
    validate = ajv.compile({ $ref: `openresponses#/components/schemas/${name}` });
    cache.set(name, validate);
  }
  return validate;
}

const EVENT_SCHEMAS: Record<string, string> = {
  'response.created': 'ResponseCreatedStreamingEvent',
  'response.queued': 'ResponseQueuedStreamingEvent',
  'response.in_progress': 'ResponseInProgressStreamingEvent',
  'response.completed': 'ResponseCompletedStreamingEvent',
  'response.failed': 'ResponseFailedStreamingEvent',
  'response.incomplete': 'ResponseIncompleteStreamingEvent',
  'response.output_item.added': 'ResponseOutputItemAddedStreamingEvent',
  'response.output_item.done': 'ResponseOutputItemDoneStreamingEvent',
  'response.reasoning_summary_part.added': 'ResponseReasoningSummaryPartAddedStreamingEvent',
  'response.reasoning_summary_part.done': 'ResponseReasoningSummaryPartDoneStreamingEvent',
  'response.content_part.added': 'ResponseContentPartAddedStreamingEvent',
  'response.content_part.done': 'ResponseContentPartDoneStreamingEvent',
  'response.output_text.delta': 'ResponseOutputTextDeltaStreamingEvent',
  'response.output_text.done': 'ResponseOutputTextDoneStreamingEvent',
  'response.refusal.delta': 'ResponseRefusalDeltaStreamingEvent',
  'response.refusal.done': 'ResponseRefusalDoneStreamingEvent',
  'response.reasoning.delta': 'ResponseReasoningDeltaStreamingEvent',
  'response.reasoning.done': 'ResponseReasoningDoneStreamingEvent',
  'response.reasoning_summary_text.delta': 'ResponseReasoningSummaryDeltaStreamingEvent',
  'response.reasoning_summary_text.done': 'ResponseReasoningSummaryDoneStreamingEvent',
  'response.output_text.annotation.added': 'ResponseOutputTextAnnotationAddedStreamingEvent',
  'response.function_call_arguments.delta': 'ResponseFunctionCallArgumentsDeltaStreamingEvent',
  'response.function_call_arguments.done': 'ResponseFunctionCallArgumentsDoneStreamingEvent',
  error: 'ErrorStreamingEvent',
};

function check(name: string, value: unknown, what: string): void {
  const validate = validator(name);
  if (!validate(value)) {
    throw new Error(`${what} does not match ${name}: ${ajv.errorsText(validate.errors, { separator: '\n  ' })}\n${JSON.stringify(value).slice(0, 2000)}`);
  }
}

/** Throws unless `value` is a valid `ResponseResource`. */
export function assertValidResponse(value: unknown): void {
  check('ResponseResource', value, 'response');
}

/** OpenAI's item kinds the gateway emits that the OpenResponses schema does not define (README: MCP, custom tools, tool search). */
const OPENAI_ONLY_ITEMS = /^(mcp_|custom_tool_call|tool_search_|web_search_call$|file_search_call$|code_interpreter_call$|image_generation_call$)/;

/** Throws unless `value` is a valid `ResponseResource` once OpenAI's own item kinds are set aside; every other item is checked. */
export function assertValidResponseWithOpenAIItems(value: unknown): void {
  const response = value as { output: { type: string }[] };
  assertValidResponse({ ...response, output: response.output.filter((item) => !OPENAI_ONLY_ITEMS.test(item.type)) });
}

/** Throws unless `value` is a valid `CompactResource` (the answer of `POST /v1/responses/compact`). */
export function assertValidCompaction(value: unknown): void {
  check('CompactResource', value, 'compaction');
}

/** Throws unless `item` is a valid output-shaped item (`ItemField`), as listed by input_items. */
export function assertValidItem(item: unknown): void {
  check('ItemField', item, 'item');
}

/** Throws unless `event` is one of the schema's streaming events and valid as such. */
export function assertValidEvent(event: unknown): void {
  const type = (event as { type?: unknown })?.type;
  const schema = typeof type === 'string' ? EVENT_SCHEMAS[type] : undefined;
  if (!schema) throw new Error(`event type ${JSON.stringify(type)} is not in the OpenResponses schema`);
  check(schema, event, `event ${type}`);
}

/** Throws unless `body` is an OpenResponses error envelope. */
export function assertErrorEnvelope(body: unknown): asserts body is { error: { message: string; type: string; param: string | null; code: string | null } } {
  const error = (body as { error?: Record<string, unknown> })?.error;
  if (!error || typeof error.message !== 'string' || typeof error.type !== 'string' || !('param' in error) || !('code' in error)) {
    throw new Error(`not an error envelope: ${JSON.stringify(body)}`);
  }
}

/** Throws unless `frame` is a valid `WebSocketErrorEvent` (OpenResponses 2026-04-24). */
export function assertValidWebSocketError(frame: unknown): void {
  check('WebSocketErrorEvent', frame, 'websocket error frame');
}

const extensions = JSON.parse(readFileSync(new URL('../../openapi/loopgate-extensions.json', import.meta.url), 'utf8')) as { components: { schemas: Record<string, unknown> } };
ajv.addSchema({ $id: 'loopgate', components: extensions.components });

/** Throws unless `value` is valid as loopgate's extension schema `name` (openapi/loopgate-extensions.json). */
export function assertValidExtension(name: 'InputTokenCount' | 'ResponseResourceExtensions' | 'TruncationReport' | 'CreateResponseExtensions' | 'LoopReport' | 'InspectorResponseList' | 'InspectorTimeline' | 'UsageList', value: unknown): void {
  const key = `loopgate:${name}`;
  let validate = cache.get(key);
  if (!validate) {
    validate = ajv.compile({ $ref: `loopgate#/components/schemas/${name}` });
    cache.set(key, validate);
  }
  if (!validate(value)) throw new Error(`${name} does not match openapi/loopgate-extensions.json: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 2000)}`);
}

/**
 * OpenAI's MCP items as the gateway emits them (the openai SDK's `McpCall`,
 * `McpApprovalRequest` and `McpListTools`, with `error` as text), optional
 * fields absent rather than null: the AI SDK's strict schema rejects null there.
 */
const OPENAI_MCP_ITEM_SCHEMAS: Record<string, object> = {
  mcp_call: {
    type: 'object',
    required: ['type', 'id', 'server_label', 'name', 'arguments'],
    additionalProperties: false,
    properties: {
      type: { const: 'mcp_call' },
      id: { type: 'string', minLength: 1 },
      server_label: { type: 'string', minLength: 1 },
      name: { type: 'string', minLength: 1 },
      arguments: { type: 'string' },
      output: { type: 'string' },
      error: { type: 'string' },
      status: { enum: ['in_progress', 'completed', 'incomplete', 'calling', 'failed'] },
      approval_request_id: { type: 'string', minLength: 1 },
      // The gateway's extension: images the tool answered with (OpenAI's output is only text).
      'loopgate:images': {
        type: 'array',
        items: { type: 'object', required: ['type', 'image_url'], additionalProperties: false, properties: { type: { const: 'input_image' }, image_url: { type: 'string', pattern: '^data:image/' } } },
      },
    },
  },
  mcp_approval_request: {
    type: 'object',
    required: ['type', 'id', 'server_label', 'name', 'arguments'],
    additionalProperties: false,
    properties: { type: { const: 'mcp_approval_request' }, id: { type: 'string', minLength: 1 }, server_label: { type: 'string', minLength: 1 }, name: { type: 'string', minLength: 1 }, arguments: { type: 'string' } },
  },
  mcp_list_tools: {
    type: 'object',
    required: ['type', 'id', 'server_label', 'tools'],
    additionalProperties: false,
    properties: {
      type: { const: 'mcp_list_tools' },
      id: { type: 'string', minLength: 1 },
      server_label: { type: 'string', minLength: 1 },
      error: { type: 'string' },
      tools: {
        type: 'array',
        items: { type: 'object', required: ['name', 'input_schema'], additionalProperties: false, properties: { name: { type: 'string' }, input_schema: { type: 'object' }, description: { type: 'string' }, annotations: { type: 'object' } } },
      },
    },
  },
};

/** Throws unless `item` is one of OpenAI's MCP items, valid as such. */
export function assertValidOpenAIMcpItem(item: unknown): void {
  const type = (item as { type?: unknown })?.type;
  const schema = typeof type === 'string' ? OPENAI_MCP_ITEM_SCHEMAS[type] : undefined;
  if (!schema) throw new Error(`item type ${JSON.stringify(type)} is not one of OpenAI's MCP items`);
  const key = `openai:${type}`;
  let validate = cache.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    cache.set(key, validate);
  }
  if (!validate(item)) throw new Error(`${String(type)} item is not valid: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(item).slice(0, 2000)}`);
}

/** A response with MCP items: every other item against the OpenResponses schema, MCP items against OpenAI's shapes. */
export function assertValidResponseWithMcpItems(value: unknown): void {
  assertValidResponseWithOpenAIItems(value);
  for (const item of (value as { output: { type: string }[] }).output) if (item.type.startsWith('mcp_')) assertValidOpenAIMcpItem(item);
}

/**
 * An event of a response with MCP items: the OpenResponses schema checks the
 * event itself (an MCP item set aside as the null item the schema allows, a
 * response's MCP items left out of its output), and OpenAI's shapes the MCP items.
 */
export function assertValidEventWithMcpItems(event: unknown): void {
  const body = event as { item?: { type: string } | null; response?: { output: { type: string }[] } };
  if (body.item && body.item.type.startsWith('mcp_')) {
    assertValidOpenAIMcpItem(body.item);
    assertValidEvent({ ...body, item: null });
    return;
  }
  if (body.response) {
    for (const item of body.response.output) if (item.type.startsWith('mcp_')) assertValidOpenAIMcpItem(item);
    assertValidEvent({ ...body, response: { ...body.response, output: body.response.output.filter((item) => !OPENAI_ONLY_ITEMS.test(item.type)) } });
    return;
  }
  assertValidEvent(event);
}

/** Hosted calls an upstream ran, passed through (OpenAI's items; the OpenResponses schema has none). */
const HOSTED_CALL_ITEMS = /^(web_search_call|file_search_call|code_interpreter_call|image_generation_call)$/;
const HOSTED_PROGRESS_EVENT = /^response\.(web_search_call|file_search_call|code_interpreter_call|code_interpreter_call_code|image_generation_call)\.[a-z_]+$/;

/** Throws unless `item` is a hosted call as OpenAI shapes one: a known type, a non-empty id, a status. */
export function assertValidHostedCallItem(item: unknown): void {
  const body = item as { type?: unknown; id?: unknown; status?: unknown };
  if (typeof body?.type !== 'string' || !HOSTED_CALL_ITEMS.test(body.type)) throw new Error(`not a hosted call item: ${JSON.stringify(item).slice(0, 500)}`);
  if (typeof body.id !== 'string' || body.id === '') throw new Error(`hosted call item without an id: ${JSON.stringify(item).slice(0, 500)}`);
  if (typeof body.status !== 'string') throw new Error(`hosted call item without a status: ${JSON.stringify(item).slice(0, 500)}`);
}

/** A response with hosted call items: those checked as OpenAI shapes them, everything else by the OpenResponses schema. */
export function assertValidResponseWithHostedItems(value: unknown): void {
  assertValidResponseWithOpenAIItems(value);
  for (const item of (value as { output: { type: string }[] }).output) if (HOSTED_CALL_ITEMS.test(item.type)) assertValidHostedCallItem(item);
}

/**
 * An event of a response with hosted calls: their progress events (OpenAI's,
 * not the schema's) checked for the fields every item-scoped event has, their
 * items as OpenAI shapes them (set aside as the null item the schema allows),
 * and everything else by the OpenResponses schema, MCP items as OpenAI's.
 */
export function assertValidEventWithHostedItems(event: unknown): void {
  const body = event as { type: string; sequence_number?: unknown; item_id?: unknown; output_index?: unknown; item?: { type: string } | null };
  if (HOSTED_PROGRESS_EVENT.test(body.type)) {
    if (typeof body.sequence_number !== 'number' || typeof body.item_id !== 'string' || typeof body.output_index !== 'number') throw new Error(`hosted progress event is not item-scoped: ${JSON.stringify(event)}`);
    return;
  }
  if (body.item && HOSTED_CALL_ITEMS.test(body.item.type)) {
    assertValidHostedCallItem(body.item);
    assertValidEvent({ ...body, item: null });
    return;
  }
  assertValidEventWithMcpItems(event);
}
