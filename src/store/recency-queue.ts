/** What the queue needs of what it holds: a place to note where it stands. */
export interface Queued {
  /** Where it stands in its queue, counted from the queue's first item ever (positions only grow, so compaction keeps them valid). */
  position: number;
}

/**
 * Items in the order they were last used, least recent first, as a queue in
 * an array: an item used again leaves a hole where it was and is appended;
 * the oldest is found by walking from the front. No hashing, as a `Set` of
 * the items needed. The array drops the places walked past, and its holes
 * when they outnumber the items, as it goes.
 */
export class RecencyQueue<T extends Queued> {
  #places: (T | undefined)[] = [];
  /** The position of `#places[0]`. */
  #base = 0;
  /** The index in `#places` of the oldest place not yet walked past. */
  #front = 0;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Places the item last. */
  append(item: T): void {
    if (this.#front > 1024 && this.#front * 2 > this.#places.length) {
      this.#places = this.#places.slice(this.#front);
      this.#base += this.#front;
      this.#front = 0;
    } else if (this.#places.length > 1024 && this.#places.length > this.#size * 4) {
      this.#compact();
    }
    item.position = this.#base + this.#places.length;
    this.#places.push(item);
    this.#size++;
  }

  /** Takes the item out; false when the queue does not hold it. */
  remove(item: T): boolean {
    const index = item.position - this.#base;
    if (this.#places[index] !== item) return false;
    this.#places[index] = undefined;
    this.#size--;
    return true;
  }

  /** Marks the item used now: it goes last. */
  touch(item: T): void {
    if (this.remove(item)) this.append(item);
  }

  /** The least recently used item, left in place; undefined when the queue is empty. */
  oldest(): T | undefined {
    if (this.#size === 0) return undefined;
    while (this.#front < this.#places.length && this.#places[this.#front] === undefined) this.#front++;
    return this.#places[this.#front];
  }

  clear(): void {
    this.#places = [];
    this.#front = 0;
    this.#size = 0;
  }

  /** The places without their holes; positions are counted afresh. */
  #compact(): void {
    const live: T[] = [];
    for (let index = this.#front; index < this.#places.length; index++) {
      const item = this.#places[index];
      if (item) {
        item.position = this.#base + live.length;
        live.push(item);
      }
    }
    this.#places = live;
    this.#front = 0;
  }
}
