import { z } from 'zod';

/**
 * The request extension `"loopgate:loop"`: per-request switches for the loop
 * controls (README: "Loop controls"). Every field is optional and falls back
 * to the operator's `loop` configuration; the engine refuses values beyond the
 * operator's limits (controls/resolve-loop-controls.ts). Unknown fields are a
 * 400, as everywhere in the request.
 */
export const LoopControlsParam = z
  .object({
    /** Tools (by the name the model calls them) whose successful call ends the response once its turn has run. */
    terminal_tools: z.array(z.string().min(1).max(128)).max(128).optional(),
    /** Model calls that may ask for tools, at most the operator's `loop.requestLimits.maxTurns`. */
    max_turns: z.int().min(1).optional(),
    /** Calls run per model turn; the rest get an error output. At most the operator's own cap, when it sets one. */
    max_tool_calls_per_turn: z.int().min(1).optional(),
    /** At `max_turns` or `max_tool_calls`: end `incomplete`, or make one last model call without tools for a final answer. */
    at_limit: z.enum(['incomplete', 'final_answer']).optional(),
    /** Check the final answer (`text.format` json_schema / json_object, and the operator's validator) and let the model retry. */
    output_validation: z.union([z.literal(false), z.object({ max_attempts: z.int().min(1) }).strict()]).optional(),
    /** Ask the model once to confirm it is done before accepting its first text-only answer after using tools. */
    completion_check: z.boolean().optional(),
  })
  .strict();

export type LoopControlsParam = z.infer<typeof LoopControlsParam>;

/** What the loop controls did, reported in the response as `"loopgate:loop"`; absent when none acted. */
export interface LoopReport {
  /** Why the loop ended early, when a control ended it. */
  ended_by?: { type: 'terminal_tool'; name: string; call_id: string } | { type: 'final_answer_at_limit'; limit: 'max_turns' | 'max_tool_calls' };
  output_validation?: { attempts: number; valid: boolean; errors?: string[] };
  /** `confirmed`: the model answered the confirmation prompt with text again; `resumed_work`: it went back to its tools. */
  completion_check?: { outcome: 'confirmed' | 'resumed_work' };
}
