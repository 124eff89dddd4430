import { GatewayError } from '../../errors/gateway-error.ts';
import type { TurnRequest } from '../provider.ts';
import { isOpenAIReasoning } from './convert-to-responses-request.ts';

/**
 * OpenAI refuses encrypted reasoning that another organisation's key minted
 * (a 400 `invalid_encrypted_content`: "The encrypted content … could not be
 * verified"): after the operator moved a deployment to another key, or when
 * an alias routes over deployments of two accounts. Every later turn of a
 * stored conversation would carry that reasoning again, so the conversation
 * would be stuck for good. The reasoning is the model's scratch work, not
 * part of what was said: the call goes again without it, once.
 */
export function refusedEncryptedReasoning(error: unknown): error is GatewayError {
  return error instanceof GatewayError && error.code === 'invalid_encrypted_content';
}

/** The turn without OpenAI's encrypted reasoning (the items stay, in place, so the history's length holds); null when it carries none. */
export function withoutEncryptedReasoning(request: TurnRequest): TurnRequest | null {
  if (!request.items.some((item) => item.type === 'reasoning' && isOpenAIReasoning(item.encrypted_content))) return null;
  const items = request.items.map((item) => (item.type === 'reasoning' && isOpenAIReasoning(item.encrypted_content) ? { ...item, encrypted_content: null } : item));
  return { ...request, items };
}
