import { isWhitespace, JsonBracketTracker } from './json-bracket-tracker.ts';

/** A stretch of the model's text, in the order it was written. */
export type ScannedSegment =
  /** Plain text: safe to show as it is. */
  | { kind: 'text'; text: string }
  /**
   * Text that may be a tool call, held back until it ended: a bare JSON
   * object (or array of objects) starting a line, or a fenced block whose
   * content starts with one. `body` is the JSON text to read, `raw` the whole
   * stretch as written and `lead` the whitespace before it (shown only if it
   * turns out not to be a call). `complete` is false when the text ended first.
   */
  | { kind: 'candidate'; lead: string; raw: string; body: string; fenced: boolean; complete: boolean };

type Mode =
  | { kind: 'prose' }
  /** `[` starting a line: a list of calls if the next non-blank character is `{`. */
  | { kind: 'bracket' }
  | { kind: 'json'; tracker: JsonBracketTracker }
  /** Backticks starting a line: a fence once there are three. */
  | { kind: 'backticks'; ticks: number }
  | { kind: 'fence-info'; ticks: number; info: string }
  /** Inside a fence that may hold a call, before its first non-blank character. */
  | { kind: 'fence-start'; ticks: number; content: string }
  | { kind: 'held-fence'; ticks: number; content: string; line: string }
  /** A fenced block that cannot be a call (code, prose), streamed through until its closing line. */
  | { kind: 'passed-fence'; ticks: number; atLineStart: boolean };

/** Fence languages a call may be written under. */
const CALL_FENCE_INFO = /^(|json\w*|tool\w*)$/i;

/**
 * Splits streamed model text into plain text, passed on as soon as it is
 * known not to start a tool call, and candidates, held back until they end.
 * Only the start of a line (after blanks) can open a candidate: a `{`, a `[`
 * followed by `{`, or a ``` fence; text that merely mentions `{` mid-line
 * streams through. Blank text is held too while what follows it may be a
 * call, so the text before a call does not end in the blank lines that
 * separated it from the call. Pure and synchronous: what to make of a
 * candidate is decided by `readCandidate` (read-tool-calls.ts).
 */
export class CallScanner {
  #mode: Mode = { kind: 'prose' };
  /** Blank text not yet shown: it goes with whatever follows it. */
  #lead = '';
  /** Whether the current line already showed a non-blank character (then no call can start on it). */
  #lineHasText = false;
  /** The candidate, or the undecided start of one, so far (without its lead). */
  #held = '';
  #text = '';
  /** The line break that ended a fenced call's closing line: the prose's own, shown before whatever prose comes next (as after a bare call). */
  #breakOwed = false;
  #segments: ScannedSegment[] = [];

  push(delta: string): ScannedSegment[] {
    for (const char of delta) this.#step(char);
    return this.#take();
  }

  /** The text ended: whatever was held is decided now. */
  end(): ScannedSegment[] {
    const mode = this.#mode;
    switch (mode.kind) {
      case 'prose':
      case 'passed-fence':
      case 'bracket':
      case 'backticks':
      case 'fence-info':
      case 'fence-start':
        this.#show(this.#lead + this.#held);
        break;
      case 'json':
        this.#candidate(this.#held, false, false);
        break;
      case 'held-fence':
        // A fence left open at the very end is forgiven: whether the JSON inside is whole decides.
        this.#candidate(isFenceCloser(mode.line, mode.ticks) ? mode.content : mode.content + mode.line, true, true);
        break;
    }
    this.#lead = '';
    this.#held = '';
    this.#mode = { kind: 'prose' };
    return this.#take();
  }

  #step(char: string): void {
    const mode = this.#mode;
    switch (mode.kind) {
      case 'prose':
        if (isWhitespace(char)) {
          this.#lead += char;
          if (char === '\n') this.#lineHasText = false;
          return;
        }
        if (!this.#lineHasText && (char === '{' || char === '[' || char === '`')) {
          this.#held = char;
          if (char === '{') this.#mode = { kind: 'json', tracker: trackerFed(char) };
          else if (char === '[') this.#mode = { kind: 'bracket' };
          else this.#mode = { kind: 'backticks', ticks: 1 };
          return;
        }
        this.#show(this.#lead + char);
        this.#lead = '';
        this.#lineHasText = true;
        return;

      case 'bracket':
        if (isWhitespace(char)) {
          this.#held += char;
        } else if (char === '{') {
          this.#held += char;
          this.#mode = { kind: 'json', tracker: trackerFed(this.#held) };
        } else {
          this.#release(char);
        }
        return;

      case 'json':
        this.#held += char;
        if (mode.tracker.feed(char)) this.#candidate(this.#held, false, true);
        return;

      case 'backticks':
        if (char === '`') {
          this.#held += char;
          mode.ticks++;
        } else if (mode.ticks >= 3) {
          this.#mode = { kind: 'fence-info', ticks: mode.ticks, info: '' };
          this.#step(char);
        } else {
          this.#release(char);
        }
        return;

      case 'fence-info':
        this.#held += char;
        if (char !== '\n') {
          mode.info += char;
        } else if (CALL_FENCE_INFO.test(mode.info.trim())) {
          this.#mode = { kind: 'fence-start', ticks: mode.ticks, content: '' };
        } else {
          this.#passFence(mode.ticks);
        }
        return;

      case 'fence-start':
        if (char === '{' || char === '[') {
          this.#held += char;
          const content = mode.content + char;
          const lineStart = content.lastIndexOf('\n') + 1;
          this.#mode = { kind: 'held-fence', ticks: mode.ticks, content: content.slice(0, lineStart), line: content.slice(lineStart) };
        } else if (isWhitespace(char)) {
          this.#held += char;
          mode.content += char;
        } else {
          // Not JSON: the block is shown as it comes; `char` may already begin its closing line.
          this.#passFence(mode.ticks);
          this.#step(char);
        }
        return;

      case 'held-fence':
        this.#held += char;
        if (char !== '\n') {
          mode.line += char;
        } else if (isFenceCloser(mode.line, mode.ticks)) {
          this.#held = this.#held.slice(0, -1);
          this.#candidate(mode.content, true, true);
          this.#breakOwed = true;
        } else {
          mode.content += mode.line + '\n';
          mode.line = '';
        }
        return;

      case 'passed-fence':
        if (!mode.atLineStart) {
          this.#show(char);
          if (char === '\n') mode.atLineStart = true;
          return;
        }
        // The start of a line inside the block is held while it may still be the closing fence.
        this.#held += char;
        if (char === '\n') {
          const closes = isFenceCloser(this.#held.slice(0, -1), mode.ticks);
          this.#show(this.#held);
          this.#held = '';
          if (closes) {
            this.#mode = { kind: 'prose' };
            this.#lineHasText = false;
          }
        } else if (char !== '`' && char !== ' ' && char !== '\t' && char !== '\r') {
          this.#show(this.#held);
          this.#held = '';
          mode.atLineStart = false;
        }
        return;
    }
  }

  /** What was held turned out not to open a call: shown, and `char` read again as prose. */
  #release(char: string): void {
    this.#show(this.#lead + this.#held);
    this.#lead = '';
    this.#held = '';
    this.#lineHasText = true;
    this.#mode = { kind: 'prose' };
    this.#step(char);
  }

  /** Shows the fence's opening (held so far) and streams the rest of the block. */
  #passFence(ticks: number): void {
    this.#show(this.#lead + this.#held);
    this.#lead = '';
    this.#held = '';
    this.#mode = { kind: 'passed-fence', ticks, atLineStart: true };
  }

  #candidate(body: string, fenced: boolean, complete: boolean): void {
    this.#breakOwed = false;
    this.#flushText();
    this.#segments.push({ kind: 'candidate', lead: this.#lead, raw: this.#held, body, fenced, complete });
    this.#lead = '';
    this.#held = '';
    // Another call may follow at once, even on the same line.
    this.#lineHasText = false;
    this.#mode = { kind: 'prose' };
  }

  #show(text: string): void {
    if (text === '') return;
    if (this.#breakOwed) this.#text += '\n';
    this.#breakOwed = false;
    this.#text += text;
  }

  #flushText(): void {
    if (this.#text) this.#segments.push({ kind: 'text', text: this.#text });
    this.#text = '';
  }

  #take(): ScannedSegment[] {
    this.#flushText();
    const segments = this.#segments;
    this.#segments = [];
    return segments;
  }
}

function trackerFed(text: string): JsonBracketTracker {
  const tracker = new JsonBracketTracker();
  for (const char of text) tracker.feed(char);
  return tracker;
}

/** A line closing a fence opened with `ticks` backticks: at least as many, nothing else but blanks. */
function isFenceCloser(line: string, ticks: number): boolean {
  const match = /^[ \t]*(`+)[ \t\r]*$/.exec(line);
  return match !== null && match[1]!.length >= ticks;
}
