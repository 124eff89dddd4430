import { GatewayError } from '../../errors/gateway-error.ts';
import type { LoopReport } from '../../protocol/loop-controls-param.ts';
import type { AnswerCheck, AnswerUnderCheck } from './answer-check.ts';
import { AnswerValidatorError } from './external-answer-checks.ts';
import type { LoopControls } from './loop-controls.ts';

/** What to do with a text-only answer. */
export type AnswerVerdict =
  | { kind: 'accept' }
  /** Not accepted yet: the answer stays out of the output, and the model sees it followed by `feedback`. */
  | { kind: 'retry'; feedback: string }
  /** Failed its checks with no attempt left: the response ends `incomplete` with this answer in its output. */
  | { kind: 'reject' };

/**
 * Stands between the model's text-only answers and the end of the loop: the
 * completion check (seed 000: the first text-only answer after tools is
 * followed by one confirmation prompt) and output validation (seed 002: the
 * answer is checked and, when it fails, the problems go back to the model,
 * up to `maxAttempts` answers, counted apart from turns). Answers that may
 * still be retried are held back from the client, so what a client sees is
 * only ever an accepted answer or the last one.
 */
export class AnswerGate {
  readonly #controls: LoopControls;
  #checkAsked = false;
  #checkOutcome: 'confirmed' | 'resumed_work' | null = null;
  #attempts = 0;
  #lastProblems: string[] = [];

  constructor(controls: LoopControls) {
    this.#controls = controls;
  }

  /** Whether the next turn's events must wait until its answer is judged (it might be retried). */
  holdsNextTurn(usedTools: boolean, finalCall: boolean): boolean {
    if (finalCall) return false;
    if (this.#checkPending(usedTools)) return true;
    const validation = this.#controls.outputValidation;
    return validation !== null && this.#attempts + 1 < validation.maxAttempts;
  }

  /** The model called tools: after a completion check, that means it went back to work. */
  sawToolCalls(): void {
    if (this.#checkAsked && this.#checkOutcome === null) this.#checkOutcome = 'resumed_work';
  }

  /**
   * Judges a text-only answer in two steps: this one, which needs nothing of
   * the answer (the completion check, or no validation at all: most
   * responses end here, without an await), then `validate` when it returns
   * null. Called once per answer.
   */
  verdictBeforeReading(usedTools: boolean, finalCall: boolean): AnswerVerdict | null {
    if (!finalCall && this.#checkPending(usedTools)) {
      this.#checkAsked = true;
      return { kind: 'retry', feedback: this.#controls.completionCheck! };
    }
    if (this.#checkAsked && this.#checkOutcome === null) this.#checkOutcome = 'confirmed';
    return this.#controls.outputValidation ? null : ACCEPT;
  }

  /** The answer's validation, once `verdictBeforeReading` left it to it. */
  async validate(answer: AnswerUnderCheck, finalCall: boolean): Promise<AnswerVerdict> {
    const validation = this.#controls.outputValidation;
    if (!validation) return ACCEPT;
    this.#attempts++;
    const problems = await this.#problems(answer, validation.checks);
    this.#lastProblems = problems;
    if (problems.length === 0) return { kind: 'accept' };
    if (finalCall || this.#attempts >= validation.maxAttempts) return { kind: 'reject' };
    return { kind: 'retry', feedback: retryPrompt(problems) };
  }

  /**
   * A retried answer ended before it could be judged (cut short by
   * `max_output_tokens`, filtered): one attempt more, not valid, and the
   * report says why rather than repeat the errors of the hidden attempt
   * before it. A first answer cut short was never an attempt of validation.
   */
  cutShort(reason: string): void {
    if (!this.#controls.outputValidation || this.#attempts === 0) return;
    this.#attempts++;
    this.#lastProblems = [`The answer was cut short (${reason}) before it could be judged.`];
  }

  /** What the loop did, for the response's `"loopgate:loop"`: how it ended (when a control ended it) and what the gate did; null when neither says anything. */
  report(endedBy: LoopReport['ended_by'] | undefined): LoopReport | null {
    if (!endedBy && !this.#checkOutcome && this.#attempts === 0) return null;
    const report: LoopReport = endedBy ? { ended_by: endedBy } : {};
    if (this.#checkOutcome) report.completion_check = { outcome: this.#checkOutcome };
    if (this.#attempts > 0) {
      const valid = this.#lastProblems.length === 0;
      report.output_validation = { attempts: this.#attempts, valid, ...(!valid && { errors: this.#lastProblems }) };
    }
    return report;
  }

  #checkPending(usedTools: boolean): boolean {
    return this.#controls.completionCheck !== null && !this.#checkAsked && usedTools;
  }

  async #problems(answer: AnswerUnderCheck, checks: readonly AnswerCheck[]): Promise<string[]> {
    try {
      const found = await Promise.all(checks.map((check) => check.problems(answer)));
      return found.flat();
    } catch (error) {
      if (error instanceof AnswerValidatorError) throw new GatewayError({ status: 502, type: 'server_error', code: 'output_validator_failed', message: error.message });
      throw error;
    }
  }
}

const ACCEPT: AnswerVerdict = { kind: 'accept' };

function retryPrompt(problems: readonly string[]): string {
  return ['Your answer was not accepted:', ...problems.map((problem) => `- ${problem}`), 'Answer again with the corrected answer only.'].join('\n');
}
