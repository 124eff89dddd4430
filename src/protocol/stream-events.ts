import type { HostedCallItem, MessageContent, OutputItem, TextAnnotation } from './output-items.ts';
import type { ResponseResource } from './response-resource.ts';

/**
 * The OpenResponses streaming events this gateway emits: a subset of the
 * schema's 24, chosen so that the OpenAI SDK's `responses.stream()` accepts
 * every one (it throws on types it does not know). Beyond the schema: the
 * progress events of hosted calls an upstream ran (OpenAI's own
 * `response.web_search_call.searching`, …, which the SDK knows), passed on.
 */

interface ItemScoped {
  item_id: string;
  output_index: number;
}
interface ContentScoped extends ItemScoped {
  content_index: number;
}
interface SummaryScoped extends ItemScoped {
  summary_index: number;
}

export type ResponseStreamEventBody =
  | { type: 'response.created' | 'response.in_progress'; response: ResponseResource }
  | { type: 'response.completed' | 'response.failed' | 'response.incomplete'; response: ResponseResource }
  | { type: 'response.output_item.added' | 'response.output_item.done'; output_index: number; item: OutputItem }
  | ({ type: 'response.content_part.added' | 'response.content_part.done'; part: MessageContent } & ContentScoped)
  | ({ type: 'response.output_text.delta'; delta: string; logprobs: unknown[] } & ContentScoped)
  | ({ type: 'response.output_text.done'; text: string; logprobs: unknown[] } & ContentScoped)
  | ({ type: 'response.refusal.delta'; delta: string } & ContentScoped)
  | ({ type: 'response.refusal.done'; refusal: string } & ContentScoped)
  | ({ type: 'response.function_call_arguments.delta'; delta: string } & ItemScoped)
  | ({ type: 'response.function_call_arguments.done'; arguments: string } & ItemScoped)
  | ({ type: 'response.output_text.annotation.added'; annotation_index: number; annotation: TextAnnotation } & ContentScoped)
  | ({ type: 'response.reasoning_summary_part.added' | 'response.reasoning_summary_part.done'; part: { type: 'summary_text'; text: string } } & SummaryScoped)
  | ({ type: 'response.reasoning_summary_text.delta'; delta: string } & SummaryScoped)
  | ({ type: 'response.reasoning_summary_text.done'; text: string } & SummaryScoped)
  | ({ type: `response.${HostedCallItem['type']}${string}`; [field: string]: unknown } & ItemScoped)
  | { type: 'error'; error: { type: string; code: string | null; message: string; param: string | null } };

export type ResponseStreamEvent = ResponseStreamEventBody & { sequence_number: number };

export type TerminalEventType = 'response.completed' | 'response.failed' | 'response.incomplete';
