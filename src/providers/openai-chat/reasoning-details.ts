/**
 * OpenRouter's `reasoning_details`: the reasoning of a turn as the model's
 * own provider gave it (Claude's thinking with its signature, Gemini's
 * encrypted thought signatures, OpenAI's encrypted reasoning), which must go
 * back on the assistant message of its turn, unchanged, for those models to
 * go on with a tool loop (OpenRouter's "preserving reasoning blocks"). They
 * stream in pieces, one entry per `index`, and travel in the reasoning item's
 * `encrypted_content` together with the reasoning text the item shows, so a
 * client resending only sealed reasoning loses neither.
 */
const PREFIX = 'openrouter.reasoning-details.v1:';

export type ReasoningDetail = Record<string, unknown>;

/** Fields whose streamed pieces add up; any other field takes its latest value. */
const JOINED = new Set(['text', 'summary', 'data']);

/** Entries of one turn, put together from their streamed pieces. */
export class ReasoningDetails {
  #entries: ReasoningDetail[] = [];
  readonly #byIndex = new Map<number, ReasoningDetail>();

  get isEmpty(): boolean {
    return this.#entries.length === 0;
  }

  accept(pieces: readonly unknown[]): void {
    for (const [position, piece] of pieces.entries()) {
      if (piece === null || typeof piece !== 'object' || Array.isArray(piece)) continue;
      const index = typeof (piece as ReasoningDetail).index === 'number' ? ((piece as ReasoningDetail).index as number) : this.#entries.length + position;
      const entry = this.#byIndex.get(index);
      if (!entry) {
        const fresh = { ...(piece as ReasoningDetail) };
        this.#byIndex.set(index, fresh);
        this.#entries.push(fresh);
        continue;
      }
      for (const [field, value] of Object.entries(piece)) {
        if (value === null || value === undefined) continue;
        entry[field] = JOINED.has(field) && typeof value === 'string' && typeof entry[field] === 'string' ? entry[field] + value : value;
      }
    }
  }

  /** The entries so far, which then start anew (the next turn's are its own). */
  take(): ReasoningDetail[] {
    const taken = this.#entries;
    this.#entries = [];
    this.#byIndex.clear();
    return taken;
  }
}

export function sealReasoningDetails(details: ReasoningDetail[], text: string): string {
  return PREFIX + Buffer.from(JSON.stringify({ details, text }), 'utf8').toString('base64');
}

/** What a sealed value carries; null for any other value. */
export function openReasoningDetails(value: string): { details: ReasoningDetail[]; text: string } | null {
  if (!value.startsWith(PREFIX)) return null;
  try {
    const opened = JSON.parse(Buffer.from(value.slice(PREFIX.length), 'base64').toString('utf8')) as { details?: unknown; text?: unknown };
    if (!Array.isArray(opened.details)) return null;
    return { details: opened.details.filter((detail): detail is ReasoningDetail => detail !== null && typeof detail === 'object'), text: typeof opened.text === 'string' ? opened.text : '' };
  } catch {
    return null;
  }
}
