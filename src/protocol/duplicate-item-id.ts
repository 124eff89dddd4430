/**
 * The first item of a list whose id an earlier item already has, with that
 * earlier item's index; null when every id is given once. Ids are unique in
 * a conversation (its stores keep one item per id), so a list that repeats
 * one would lose the earlier item while the client saw both accepted.
 */
export function duplicateItemId(items: readonly { id?: string | null }[]): { id: string; index: number; first: number } | null {
  const seenAt = new Map<string, number>();
  for (let index = 0; index < items.length; index++) {
    const id = items[index]!.id;
    if (!id) continue;
    const first = seenAt.get(id);
    if (first !== undefined) return { id, index, first };
    seenAt.set(id, index);
  }
  return null;
}
