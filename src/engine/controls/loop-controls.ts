import { invalidRequest } from '../../errors/gateway-error.ts';
import type { CreateResponseRequest } from '../../protocol/create-response-request.ts';
import type { AnswerCheck } from './answer-check.ts';
import { externalAnswerCheck, type AnswerValidatorConfig } from './external-answer-checks.ts';
import { schemaAnswerCheck } from './schema-answer-check.ts';

/** Seed 000's wording: specific about what "done" means. */
export const DEFAULT_COMPLETION_PROMPT = [
  'Before I accept your answer, please verify:',
  '1. Have you completed all parts of the task?',
  '2. Have you verified your results (e.g., by reading output files)?',
  'If the task is not fully complete, continue working. If it is complete, restate your final answer.',
].join('\n');

/** What the operator configured (`loop.*`): defaults for every request and the limits on what one may ask. */
export interface OperatorLoopControls {
  maxTurns: number;
  /** 0: no cap. */
  maxToolCallsPerTurn: number;
  atLimit: 'incomplete' | 'final_answer';
  terminalTools: readonly string[];
  /** `prompt` null: DEFAULT_COMPLETION_PROMPT. */
  completionCheck: { enabled: boolean; prompt: string | null };
  outputValidation: { enabled: boolean; maxAttempts: number; validator: AnswerValidatorConfig | null };
  requestLimits: {
    /** Highest `max_turns` a request may ask for; null: the operator's `maxTurns` (requests may only lower it). */
    maxTurns: number | null;
    /** Highest `output_validation.max_attempts` a request may ask for. */
    maxValidationAttempts: number;
  };
}

/** The controls in force for one response. */
export interface LoopControls {
  maxTurns: number;
  maxToolCallsPerTurn: number | null;
  atLimit: 'incomplete' | 'final_answer';
  terminalTools: ReadonlySet<string>;
  /** The confirmation prompt, when the completion check is on. */
  completionCheck: string | null;
  /** Checks a final answer must pass, and how many answers the model may give; null: answers are not checked. */
  outputValidation: { maxAttempts: number; checks: readonly AnswerCheck[] } | null;
}

const PARAM = 'loopgate:loop';

/** Every control off: what an engine configured with limits alone runs with. */
export function controlsOff(maxTurns: number): OperatorLoopControls {
  return {
    maxTurns,
    maxToolCallsPerTurn: 0,
    atLimit: 'incomplete',
    terminalTools: [],
    completionCheck: { enabled: false, prompt: null },
    outputValidation: { enabled: false, maxAttempts: 3, validator: null },
    requestLimits: { maxTurns: null, maxValidationAttempts: 5 },
  };
}

/**
 * The operator's controls with the request's `"loopgate:loop"` applied:
 * everything a request asks is checked against the operator's limits here,
 * a 400 naming the field when it asks for more, before anything runs.
 */
export function resolveLoopControls(operator: OperatorLoopControls, request: CreateResponseRequest): LoopControls {
  const asked = request['loopgate:loop'] ?? {};
  const maxTurnsLimit = operator.requestLimits.maxTurns ?? operator.maxTurns;
  if (asked.max_turns !== undefined && asked.max_turns > maxTurnsLimit) {
    throw invalidRequest(`'${PARAM}.max_turns' may be at most ${maxTurnsLimit} on this gateway.`, `${PARAM}.max_turns`, 'integer_above_max_value');
  }
  const operatorCap = operator.maxToolCallsPerTurn > 0 ? operator.maxToolCallsPerTurn : null;
  if (asked.max_tool_calls_per_turn !== undefined && operatorCap !== null && asked.max_tool_calls_per_turn > operatorCap) {
    throw invalidRequest(`'${PARAM}.max_tool_calls_per_turn' may be at most ${operatorCap} on this gateway.`, `${PARAM}.max_tool_calls_per_turn`, 'integer_above_max_value');
  }
  const completionCheck = (asked.completion_check ?? operator.completionCheck.enabled) ? (operator.completionCheck.prompt ?? DEFAULT_COMPLETION_PROMPT) : null;
  return {
    maxTurns: asked.max_turns ?? operator.maxTurns,
    maxToolCallsPerTurn: asked.max_tool_calls_per_turn ?? operatorCap,
    atLimit: asked.at_limit ?? operator.atLimit,
    terminalTools: new Set([...operator.terminalTools, ...(asked.terminal_tools ?? [])]),
    completionCheck,
    outputValidation: outputValidation(operator, asked.output_validation, request),
  };
}

function outputValidation(operator: OperatorLoopControls, asked: false | { max_attempts: number } | undefined, request: CreateResponseRequest): LoopControls['outputValidation'] {
  const { validator } = operator.outputValidation;
  if (asked === false) {
    if (validator) throw invalidRequest("This gateway validates every answer: 'output_validation' cannot be turned off.", `${PARAM}.output_validation`, 'invalid_value');
    return null;
  }
  if (asked && asked.max_attempts > operator.requestLimits.maxValidationAttempts) {
    throw invalidRequest(`'${PARAM}.output_validation.max_attempts' may be at most ${operator.requestLimits.maxValidationAttempts} on this gateway.`, `${PARAM}.output_validation.max_attempts`, 'integer_above_max_value');
  }
  if (!asked && !operator.outputValidation.enabled && !validator) return null;
  const format = request.text?.format ?? null;
  const checks = [schemaAnswerCheck(format), validator && externalAnswerCheck(validator, format)].filter((check): check is AnswerCheck => Boolean(check));
  if (checks.length === 0) return null;
  return { maxAttempts: asked?.max_attempts ?? operator.outputValidation.maxAttempts, checks };
}
