import type { HostedCallItemType } from './hosted-tools.ts';

/** Items of `ResponseResource.output`, as the OpenResponses schema (`ItemField`) shapes them. */

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

/** An annotation on output text (a web search's `url_citation`, a file citation), as the upstream made it. */
export type TextAnnotation = { type: string } & Record<string, unknown>;

export interface OutputTextContent {
  type: 'output_text';
  text: string;
  annotations: TextAnnotation[];
  logprobs?: unknown[];
}
export interface RefusalContent {
  type: 'refusal';
  refusal: string;
}
export type MessageContent = OutputTextContent | RefusalContent;

export interface MessageOutputItem {
  type: 'message';
  id: string;
  status: ItemStatus;
  role: 'assistant';
  content: MessageContent[];
  phase?: 'commentary' | 'final_answer';
}

export interface FunctionCallOutputItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  /** The namespace tool the function belongs to (the model called it `<namespace>__<name>`). */
  namespace?: string;
  arguments: string;
  status: ItemStatus;
}

/** A call's output the gateway gives: a function's, or a freeform (`custom`) tool's, as each kind of call is answered. */
export interface FunctionCallResultItem {
  type: 'function_call_output' | 'custom_tool_call_output';
  id: string;
  call_id: string;
  output: string | unknown[];
  status: ItemStatus;
}

/** A call of a freeform (`custom`) tool: the model's text as `input`. OpenAI's shape; the OpenResponses schema has none. */
export interface CustomToolCallOutputItem {
  type: 'custom_tool_call';
  id: string;
  call_id: string;
  name: string;
  namespace?: string;
  input: string;
  status: ItemStatus;
}

/** A tool search the client runs (OpenAI's shape); answered with a `tool_search_output` that loads tools. */
export interface ToolSearchCallOutputItem {
  type: 'tool_search_call';
  id: string;
  call_id: string;
  arguments: unknown;
  execution: 'client';
  status: ItemStatus;
}

export interface ReasoningTextContent {
  type: 'reasoning_text';
  text: string;
}
export interface ReasoningOutputItem {
  type: 'reasoning';
  id: string;
  summary: { type: 'summary_text'; text: string }[];
  content?: ReasoningTextContent[];
  encrypted_content?: string;
}

/** The window summarised and sealed (compaction/compaction-codec.ts): what a `compaction_trigger` input asks for; sent back as input, it stands for everything before it. */
export interface CompactionOutputItem {
  type: 'compaction';
  id: string;
  encrypted_content: string;
}

/** A tool an MCP server offers, as `mcp_list_tools` reports it. */
/** Optional fields are absent, never null: strict clients (the AI SDK) reject null where OpenAI's types say optional. */
export interface McpToolDescription {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

/** OpenAI's MCP items (not in the OpenResponses schema; the OpenAI SDK knows them). */
export interface McpListToolsItem {
  type: 'mcp_list_tools';
  id: string;
  server_label: string;
  tools: McpToolDescription[];
  error?: string;
}
export interface McpCallItem {
  type: 'mcp_call';
  id: string;
  server_label: string;
  name: string;
  arguments: string;
  output?: string;
  error?: string;
  status: ItemStatus;
  approval_request_id?: string;
  /**
   * Images the tool answered with, as data URLs (a browser tool's screenshot):
   * OpenAI's `output` is only text, so they ride here, and the model is shown
   * them after the output's text, as a `function_call_output` would hold them.
   */
  'loopgate:images'?: { type: 'input_image'; image_url: string }[];
}
export interface McpApprovalRequestItem {
  type: 'mcp_approval_request';
  id: string;
  server_label: string;
  name: string;
  arguments: string;
}

/**
 * A call of a hosted tool the upstream ran (`web_search_call`, …), in OpenAI's
 * shape, kept exactly as the upstream reported it: the gateway neither reads
 * nor changes its fields (hosted-tools.ts).
 */
export interface HostedCallItem {
  type: HostedCallItemType;
  id: string;
  status?: string;
  [field: string]: unknown;
}

export type OutputItem = HostedCallItem | CompactionOutputItem | MessageOutputItem | FunctionCallOutputItem | FunctionCallResultItem | CustomToolCallOutputItem | ToolSearchCallOutputItem | ReasoningOutputItem | McpListToolsItem | McpCallItem | McpApprovalRequestItem;
