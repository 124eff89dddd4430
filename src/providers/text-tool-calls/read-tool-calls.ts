import { parseJsonWithinDepth } from '../../protocol/json-depth.ts';
import { REQUEST_LIMITS } from '../../protocol/request-limits.ts';
import { splitJsonValues } from './json-bracket-tracker.ts';

/** One call read from the model's text, as a native model would have made it. */
export interface TextToolCall {
  name: string;
  /** The `parameters` object as JSON text: the call's `arguments`. */
  arguments: string;
  /** The protocol's `terminate` flag. */
  terminal: boolean;
}

export type CandidateReading =
  | { kind: 'calls'; calls: TextToolCall[] }
  /** Not a call at all: JSON or code the model wrote as part of its answer. */
  | { kind: 'text' }
  /** Meant as a call, but not one the gateway can make: `problem` says why, for the model to put right. */
  | { kind: 'invalid'; problem: string };

/** The keys that mark a JSON object as a call attempt (they are the protocol's own). */
const CALL_KEY = /"(tool|parameters)"\s*:/;

/**
 * Decides what a held-back candidate (call-scanner.ts) is. JSON that parses
 * into objects meant as calls (`isCallAttempt`) is a call attempt: each
 * object must then name one of `tools`, carry `parameters` as an object and,
 * if it has one, a boolean `terminate`. An array, or several objects one
 * after another, is several calls. Text that does not parse is a broken call
 * only if it uses the protocol's keys; otherwise it is the model's prose.
 */
export function readCandidate(body: string, complete: boolean, tools: readonly string[]): CandidateReading {
  const looksLikeCall = CALL_KEY.test(body);
  if (!complete) return looksLikeCall ? { kind: 'invalid', problem: 'the tool call is cut off: its JSON never closes.' } : { kind: 'text' };
  const values = parseValues(body);
  if (!values.ok) return looksLikeCall ? { kind: 'invalid', problem: `the tool call is not valid JSON (${values.error}).` } : { kind: 'text' };
  const entries = values.values.flatMap((value) => (Array.isArray(value) ? value : [value]));
  const attempts = (entry: unknown) => isCallAttempt(entry, tools);
  if (!entries.some(attempts)) return { kind: 'text' };
  const calls: TextToolCall[] = [];
  for (const entry of entries) {
    if (!attempts(entry)) return { kind: 'invalid', problem: 'every entry of a list of tool calls must be a call object with "tool" and "parameters".' };
    const call = readCall(entry, tools);
    if (typeof call === 'string') return { kind: 'invalid', problem: call };
    calls.push(call);
  }
  return { kind: 'calls', calls };
}

function parseValues(body: string): { ok: true; values: unknown[] } | { ok: false; error: string } {
  try {
    return { ok: true, values: [parseJson(body.trim())] };
  } catch (error) {
    // Several calls one after another, each valid on its own, are fine too.
    const pieces = splitJsonValues(body);
    if (pieces && pieces.length > 1) {
      try {
        return { ok: true, values: pieces.map(parseJson) };
      } catch {
        // The whole text's error says more than a piece's.
      }
    }
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

function parseJson(text: string): unknown {
  return parseJsonWithinDepth(text, REQUEST_LIMITS.maxJsonDepth);
}

/**
 * Whether an object is meant as a call: it names a tool as its `tool` (or,
 * beside `parameters`, as its `name`: how models trained on function-call
 * JSON write one), or holds nothing but the protocol's keys. An answer that
 * merely has such a field among others (a structured answer whose schema
 * asks for one: `{"tool": "hand saw", "reason": …}`, `{"name": "nightly",
 * "parameters": {"retries": 3}}`) is an answer.
 */
function isCallAttempt(value: unknown, tools: readonly string[]): value is Record<string, unknown> {
  if (!isObject(value)) return false;
  const names = (key: string) => typeof value[key] === 'string' && tools.includes(value[key]);
  if (!('tool' in value) && !('parameters' in value)) return false;
  return names('tool') || ('parameters' in value && names('name')) || Object.keys(value).every((key) => PROTOCOL_KEYS.has(key));
}

const PROTOCOL_KEYS = new Set(['tool', 'parameters', 'terminate']);

/** The call, or what is wrong with it. */
function readCall(entry: Record<string, unknown>, tools: readonly string[]): TextToolCall | string {
  const { tool, parameters, terminate } = entry;
  const available = `the tools are: ${tools.join(', ')}`;
  if (typeof tool !== 'string' || tool === '') return `"tool" must be the name of a tool (${available}).`;
  if (!tools.includes(tool)) return `there is no tool named ${JSON.stringify(tool)}; ${available}.`;
  if (!isObject(parameters)) return `"parameters" of the call to ${tool} must be a JSON object (use {} when the tool takes no arguments).`;
  if (terminate !== undefined && typeof terminate !== 'boolean') return `"terminate" must be true or false.`;
  return { name: tool, arguments: JSON.stringify(parameters), terminal: terminate === true };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
