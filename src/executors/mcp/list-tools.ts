import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, ToolSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import { z } from 'zod';
import { findTooDeep } from '../../protocol/json-depth.ts';
import { REQUEST_LIMITS } from '../../protocol/request-limits.ts';

export interface McpTool {
  name: string;
  description: string | null;
  inputSchema: Record<string, unknown>;
  annotations: Record<string, unknown> | null;
  /** Its `outputSchema`, compiled: a result must fit it (absent: the tool declares none, or it came from a stored listing). */
  outputCheck?: JsonSchemaValidator<unknown>;
}

/** A server's tools, and how each tool's structured results are checked (its `outputSchema`). */
export interface ToolListing {
  tools: McpTool[];
  outputChecks: Map<string, JsonSchemaValidator<unknown>>;
}

const MAX_DESCRIPTION_CHARS = 4_096;
const MAX_LIST_PAGES = 100;

/** A page read as it came: each tool is read on its own, so one the SDK's schema refuses does not take the page with it. */
const ToolsPage = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/**
 * Every page of a server's `tools/list`. Read page by page without the SDK's
 * `listTools`, which keeps only the last page's output-schema checks (each
 * page's call replaces the one before's): a tool's structured results would
 * be checked or not by where the server's paging put it. Here the checks of
 * every page are kept together, and applied to calls (`checkStructured`).
 *
 * A tool whose `inputSchema` has no `type` (MCP says `"object"`; servers in
 * the wild leave it out) is read as an object schema; one still malformed is
 * left out alone, as is one nested deeper than a request's own tools may be,
 * rather than the SDK refusing the whole page and with it every tool of the server.
 */
export async function listTools(client: Client, timeoutMs: number): Promise<ToolListing> {
  const tools: McpTool[] = [];
  const outputChecks = new Map<string, JsonSchemaValidator<unknown>>();
  const validator = new AjvJsonSchemaValidator();
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, ToolsPage, { timeout: timeoutMs });
    for (const raw of page.tools) {
      if (tools.length >= REQUEST_LIMITS.maxTools) break;
      const parsed = ToolSchema.safeParse(withObjectSchema(raw));
      if (!parsed.success) continue;
      const tool = parsed.data;
      // Bounded like a request's own tools: a schema nested deeper would overflow the stack wherever it is serialised (upstream body, event, store).
      if (findTooDeep(tool.inputSchema, REQUEST_LIMITS.maxJsonDepth) || findTooDeep(tool.annotations, REQUEST_LIMITS.maxJsonDepth)) continue;
      const listed: McpTool = {
        name: tool.name,
        description: tool.description ? truncate(tool.description, MAX_DESCRIPTION_CHARS) : null,
        inputSchema: tool.inputSchema as Record<string, unknown>,
        annotations: (tool.annotations as Record<string, unknown> | undefined) ?? null,
      };
      tools.push(listed);
      if (tool.outputSchema) {
        try {
          listed.outputCheck = validator.getValidator(tool.outputSchema as JsonSchemaType);
          outputChecks.set(tool.name, listed.outputCheck);
        } catch {
          // A schema that does not compile checks nothing (the SDK's own listing would have thrown on it).
        }
      }
    }
    cursor = page.nextCursor;
    // A server that pages forever (or lists thousands) is cut off at what a request may declare.
  } while (cursor && tools.length < REQUEST_LIMITS.maxTools && ++pages < MAX_LIST_PAGES);
  return { tools, outputChecks };
}

/**
 * A result of a tool that declares an `outputSchema`, checked as MCP asks a
 * client to (and as the SDK's own `callTool` does after its listing): an
 * answer that is not an error must hold `structuredContent` that fits the schema.
 */
export function checkStructured(name: string, result: CallToolResult, check: JsonSchemaValidator<unknown> | undefined): void {
  if (!check || result.isError) return;
  if (!result.structuredContent) throw new McpError(ErrorCode.InvalidRequest, `Tool ${name} has an output schema but did not return structured content`);
  const checked = check(result.structuredContent);
  if (!checked.valid) throw new McpError(ErrorCode.InvalidParams, `Structured content does not match the tool's output schema: ${checked.errorMessage}`);
}

function withObjectSchema(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object') return raw;
  const schema = (raw as { inputSchema?: unknown }).inputSchema;
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema) || 'type' in schema) return raw;
  return { ...raw, inputSchema: { type: 'object', ...schema } };
}

/** A server's text cut to `max` characters, saying so. */
export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… [truncated]` : text;
}
