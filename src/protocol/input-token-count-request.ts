import { z } from 'zod';
import { CreateResponseRequest } from './create-response-request.ts';

/**
 * The body of `POST /v1/responses/input_tokens` (openai-node's
 * `InputTokenCountParams`): the parameters of a response that decide what the
 * model is sent, validated exactly as `POST /v1/responses` validates them.
 * `personality` is accepted and ignored: no upstream here has such presets.
 */
export const InputTokenCountRequest = CreateResponseRequest.pick({
  model: true,
  input: true,
  instructions: true,
  previous_response_id: true,
  conversation: true,
  tools: true,
  tool_choice: true,
  parallel_tool_calls: true,
  text: true,
  reasoning: true,
  truncation: true,
})
  .extend({ personality: z.string().max(64).nullish() })
  .strict();

export type InputTokenCountRequest = z.infer<typeof InputTokenCountRequest>;
