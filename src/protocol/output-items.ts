/** Items of `ResponseResource.output`, as the OpenResponses schema (`ItemField`) shapes them. */

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface OutputTextContent {
  type: 'output_text';
  text: string;
  annotations: unknown[];
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
  arguments: string;
  status: ItemStatus;
}

export interface FunctionCallResultItem {
  type: 'function_call_output';
  id: string;
  call_id: string;
  output: string | unknown[];
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

export type OutputItem = MessageOutputItem | FunctionCallOutputItem | FunctionCallResultItem | ReasoningOutputItem;
