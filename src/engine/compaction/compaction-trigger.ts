import { invalidRequest } from '../../errors/gateway-error.ts';
import type { CreateResponseRequest } from '../../protocol/create-response-request.ts';

/**
 * Whether the request asks for its window compacted: its input ends with a
 * `compaction_trigger`. One anywhere else is a 400, as OpenAI says it must
 * be the final input item; so is one where compaction cannot be sealed.
 */
export function asksForCompaction(request: Pick<CreateResponseRequest, 'input'>, compactionEnabled: boolean): boolean {
  const input = request.input;
  if (typeof input === 'string' || input == null) return false;
  const at = input.findIndex((item) => item.type === 'compaction_trigger');
  if (at < 0) return false;
  if (at !== input.length - 1) throw invalidRequest("A 'compaction_trigger' must be the final input item.", `input[${at}]`, 'invalid_value');
  if (!compactionEnabled) throw invalidRequest('Compaction is not enabled on this gateway.', `input[${at}].type`, 'unsupported_type');
  return true;
}
