import type { ToolCall } from '../../executors/tool-executor.ts';
import type { PlannedCall } from '../plan-tool-calls.ts';

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
