import { invalidRequest } from '../errors/gateway-error.ts';
import { CLIENT_ANSWER_TYPES, CLIENT_CALL_ANSWERS } from './client-call-kinds.ts';

/**
 * Every tool output the client sends must answer a call the model made in
 * this conversation — in the stored `previous_response_id` chain or earlier
 * in the input (stateless clients resend `[user, function_call,
 * function_call_output]`); items added to a conversation likewise answer a
 * call it holds or one added with them. An orphan output would reach the
 * upstream as a tool message without its call, which real servers reject
 * with a 400 the client would blame on the gateway. `field` names the list
 * checked in the error's `param` (`input`, or `items`).
 */
export function checkToolOutputs(history: readonly { type: string }[], input: readonly { type: string }[], field = 'input'): void {
  // Most requests answer no call: nothing to match, no conversation to walk.
  if (!input.some((item) => CLIENT_ANSWER_TYPES.has(item.type))) return;
  for (const { answer: output, call } of CLIENT_CALL_ANSWERS) {
    const calls = new Set<string>();
    for (const item of [...history, ...input]) {
      const callId = item.type === call ? (item as { call_id?: string | null }).call_id : null;
      if (callId) calls.add(callId);
    }
    input.forEach((item, index) => {
      if (item.type !== output) return;
      const callId = (item as { call_id?: string | null }).call_id;
      // OpenAI lets a tool search output name no call (a search the server ran); there is nothing to match.
      if (callId == null || calls.has(callId)) return;
      throw invalidRequest(
        `No ${call} with call_id '${callId}' is in this conversation: a ${output} must answer a call the model made (continue with previous_response_id or in the conversation that holds the call, or send the ${call} item too).`,
        `${field}[${index}].call_id`,
        'unknown_call_id',
      );
    });
  }
}
