import type { PlannedCall } from '../plan-tool-calls.ts';

export type LoopLimit = 'max_turns' | 'max_tool_calls';

/**
 * Seed 000's per-iteration cap: the first `cap` calls of a turn are planned
 * as usual, the rest never run and tell the model why, so it can make them
 * again in its next turn.
 */
export function capCallsPerTurn(planned: readonly PlannedCall[], cap: number | null): PlannedCall[] {
  if (cap === null || planned.length <= cap) return [...planned];
  return planned.map((entry, index) =>
    index < cap || entry.route === 'rejected' ? entry : { call: entry.call, route: 'rejected', error: `This call was not run: at most ${cap} tool calls run per turn. Make it again in your next turn if you still need it.` },
  );
}

/** At a limit with `at_limit: "final_answer"`: the turn's calls never run, and their outputs say so before the last call. */
export function notRunAtLimit(planned: readonly PlannedCall[], limit: LoopLimit): PlannedCall[] {
  return planned.map((entry) => (entry.route === 'rejected' ? entry : { call: entry.call, route: 'rejected', error: `This call was not run: the response reached its limit (${limit}).` }));
}

/**
 * A turn's calls with `budget` tool calls left in the response: the first
 * `budget` server-side calls run (or, gated, wait for their approval), as
 * OpenAI runs the calls within `max_tool_calls` and ignores the rest; every
 * other call is answered saying the limit was reached (a client's too: the
 * response ends at the limit, so none is left dangling).
 */
export function withinToolCallBudget(planned: readonly PlannedCall[], budget: number, limit: LoopLimit): PlannedCall[] {
  let left = budget;
  const notRun = notRunAtLimit(planned, limit);
  return planned.map((entry, index) => ((entry.route === 'server' || entry.route === 'approval') && left-- > 0 ? entry : notRun[index]!));
}

/** Seed 001's "at the limit, ask for a final answer instead of just stopping": what the model is told on its last call, made without tools. */
export function finalAnswerPrompt(limit: LoopLimit): string {
  const what = limit === 'max_turns' ? 'the number of model turns' : 'the number of tool calls';
  return `You have reached this response's limit on ${what}. Do not call any more tools. Answer now, as well as you can, with what you have found so far.`;
}
