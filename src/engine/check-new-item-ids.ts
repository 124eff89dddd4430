import { invalidRequest } from '../errors/gateway-error.ts';

/**
 * Items a request adds to a conversation must be new to it. A conversation
 * keeps one item per id, so an item given again (a client resending a
 * response's output items with their ids) would move to the end, out of its
 * place in the history every later turn is shown. OpenAI refuses it
 * ("Duplicate item found with id …"); so does the gateway, naming the item.
 * `field` names the list in the error's `param` (`input`, or `items`).
 */
export function checkNewItemIds(held: readonly { id?: string | null }[], items: readonly { type: string; id?: string | null }[], field: string): void {
  // An item_reference's id names the item it stands for: not an item of its own.
  const given = (item: { type: string; id?: string | null }) => item.id != null && item.type !== 'item_reference';
  if (!items.some(given)) return;
  const heldIds = new Set(held.map((item) => item.id));
  items.forEach((item, index) => {
    if (!given(item) || !heldIds.has(item.id)) return;
    throw invalidRequest(`Duplicate item found with id '${item.id}': the conversation holds it already (it sends the model its items itself); leave it out, or send it without its id.`, `${field}[${index}].id`, 'duplicate_item');
  });
}
