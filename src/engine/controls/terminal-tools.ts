import { qualifiedToolName } from '../../executors/mcp/mcp-executor.ts';
import type { ToolCall } from '../../executors/tool-executor.ts';
import type { TextFormatParam } from '../../protocol/create-response-request.ts';
import type { OutputItem } from '../../protocol/output-items.ts';
import type { PlannedCall } from '../plan-tool-calls.ts';
import type { AnswerUnderCheck } from './answer-check.ts';
import { schemaAnswerCheck } from './schema-answer-check.ts';

/**
 * Seed 001's terminal tools: the call (if any) that ends the response once
 * every call of its turn has run — one to a tool named terminal, or one the
 * model itself marked as its last action (the text protocol's `terminate`).
 * Only a call that ran and succeeded ends it: a failed one goes back to the
 * model like any other error, so it can try again.
 */
export function terminalCall(planned: readonly PlannedCall[], failed: ReadonlySet<string>, terminalTools: ReadonlySet<string>): ToolCall | null {
  for (const entry of planned) {
    if (entry.route !== 'server' || failed.has(entry.call.callId)) continue;
    if (entry.call.terminal || terminalTools.has(entry.call.name)) return entry.call;
  }
  return null;
}

/** A terminal tool's call the gateway ran, successfully, while its response waited for the client: what ends the continuation. */
export interface TerminalRunWhilePaused {
  call: ToolCall;
  /** The item id the call's output shows under (its `call_id`, or an `mcp_call`'s id). */
  shownAs: string;
  output: string;
}

/**
 * A paused turn ran its server-side calls at once and waited only for the
 * client's: a terminal tool among those that ran and succeeded ends the
 * response once the client has answered, without another model call, as it
 * would have had the turn had no client call.
 */
export function terminalRunWhilePaused(output: readonly OutputItem[], terminalTools: ReadonlySet<string>): TerminalRunWhilePaused | null {
  if (terminalTools.size === 0) return null;
  // The paused turn's calls come after any text of the response (an earlier turn's calls could not have been terminal and succeeded: they would have ended it).
  const paused = output.slice(output.findLastIndex((item) => item.type === 'message') + 1);
  const outputs = new Map(paused.flatMap((item) => (item.type === 'function_call_output' ? [[item.call_id, item.output] as const] : [])));
  for (const item of paused) {
    if (item.type === 'mcp_call') {
      const name = qualifiedToolName(item.server_label, item.name);
      if (terminalTools.has(name) && !item.error && typeof item.output === 'string') return { call: { callId: item.id, name, arguments: item.arguments }, shownAs: item.id, output: item.output };
    } else if (item.type === 'function_call' && terminalTools.has(item.name)) {
      const output = outputs.get(item.call_id);
      if (typeof output === 'string' && !output.startsWith('{"error"')) return { call: { callId: item.call_id, name: item.name, arguments: item.arguments }, shownAs: item.call_id, output };
    }
  }
  return null;
}

/**
 * Whether a terminal call's output can be the answer under the request's
 * `text.format`: a JSON format's answer must parse (and match its schema),
 * or `responses.parse()` and the agent frameworks' typed outputs fail on
 * it. One that cannot leaves the call an ordinary one: the model reads its
 * output and answers in the format.
 */
export async function fitsTextFormat(output: string, format: TextFormatParam | null, context: Omit<AnswerUnderCheck, 'text'>): Promise<boolean> {
  const check = schemaAnswerCheck(format);
  return check === null || (await check.problems({ ...context, text: output })).length === 0;
}
