import { z } from 'zod';

/**
 * What `include` may name (OpenAI's `ResponseIncludable`), on creating a
 * response and on reading one back or a conversation's items. The gateway
 * keeps items whole, so each value is accepted everywhere the SDK's types
 * allow it; a value nobody defines is a 400 naming it.
 */
export const Includable = z.enum([
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
  'message.input_image.image_url',
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
]);
