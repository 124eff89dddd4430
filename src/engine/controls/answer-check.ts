import type { ToolContext } from '../../executors/tool-executor.ts';

/** What a check is told about the answer it judges. */
export interface AnswerUnderCheck {
  /** The answer's text: every `output_text` of the turn's messages, joined. */
  text: string;
  /** The response's tools, for checks that run as tools (an operator MCP validator). */
  toolContext: ToolContext;
  signal: AbortSignal;
}

/**
 * Judges a final answer (seed 002: validated output). Returns the problems it
 * found, in words the model can act on; none means the answer passes. A check
 * that cannot judge (its validator is down) throws: the response then fails
 * rather than passing an unchecked answer off as checked.
 */
export interface AnswerCheck {
  readonly name: string;
  problems(answer: AnswerUnderCheck): Promise<string[]>;
}
