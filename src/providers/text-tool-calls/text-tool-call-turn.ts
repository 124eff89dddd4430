import { newId } from '../../util/ids.ts';
import type { TurnEvent, TurnFinish, TurnRequest, TurnStream } from '../provider.ts';
import { CallScanner, type ScannedSegment } from './call-scanner.ts';
import { readCandidate, type TextToolCall } from './read-tool-calls.ts';
import { missingCallProblem, retryFeedback } from './tool-prompt.ts';
import type { ToolUsePlan } from './tool-use-plan.ts';

/** What a call written where `tool_choice` rules tools out is, for the model to put right. */
const FORBIDDEN_CALL = 'it calls a tool, and no tool may be called in this reply.';

/** What is wrong with the number of calls a reply makes: none where one is required, several where `parallel_tool_calls` is false. */
function callCountProblem(plan: ToolUsePlan, calls: number): string | null {
  if (calls === 0) return plan.mustCall ? missingCallProblem(plan) : null;
  // As a native model with parallel tool calls off makes one at most: the client asked for one at a time.
  return !plan.parallel && calls > 1 ? `it makes ${calls} tool calls, and a reply may make at most one.` : null;
}

/** The code a response fails with when the model's calls still cannot be read after every retry. */
export const INVALID_TOOL_CALL = 'invalid_tool_call';

export interface TextToolCallTurnOptions {
  plan: ToolUsePlan;
  /** What the first attempt was sent (already in plain text): a retry extends its conversation. */
  request: TurnRequest;
  /** Further attempts after a reply whose calls cannot be read. */
  retries: number;
  /** Starts another attempt. */
  restart(request: TurnRequest): Promise<TurnStream>;
}

/** One upstream call's reading. */
interface Attempt {
  /** Everything the model wrote, as written: sent back with the feedback when retried. */
  text: string;
  calls: TextToolCall[];
  /** What is wrong with the first broken call. */
  problem: string | null;
  /** The broken calls' text, shown only if the turn ends without a retry (cut short). */
  unread: string;
  /** Text held to the end of the attempt (a JSON answer: prose beside calls is reasoning, see ToolUsePlan). */
  held: string;
  finish: TurnFinish | null;
  failed: boolean;
}

/**
 * A model turn in text, read as a native tool-calling turn: text streams on
 * as `text.delta` while it cannot be a call (call-scanner.ts); calls become
 * `tool_call.start` (a new `call_…` id, `terminal` from the protocol's
 * `terminate`) and `tool_call.delta` with the parameters, at the end of the
 * turn, with finish reason `tool_calls`. A reply with a broken call — or
 * none when one is required — is retried with the model's text and feedback
 * appended, up to `retries` times, every attempt's usage passed on; when it
 * is still broken the turn ends with an `error` event (`invalid_tool_call`),
 * so the response fails saying why rather than passing off broken JSON as
 * the answer. Calls are held to the end because a later broken call sends
 * the whole reply back.
 */
export async function* textToolCallTurn(first: TurnStream, options: TextToolCallTurnOptions): AsyncGenerator<TurnEvent> {
  const { plan } = options;
  const tools = plan.tools.map((tool) => tool.name);
  const shown = new ShownText();
  let request = options.request;
  let stream = first;
  for (let attempt = 0; ; attempt++) {
    shown.startAttempt();
    const result = yield* readAttempt(stream, tools, shown, plan.answersInJson);
    if (result.failed || !result.finish) return;
    const cutShort = result.finish.reason === 'length' || result.finish.reason === 'content_filter';
    const problem = cutShort ? null : plan.forbidden ? (result.problem || result.calls.length > 0 ? FORBIDDEN_CALL : null) : (result.problem ?? callCountProblem(plan, result.calls.length));
    if (problem) {
      if (attempt >= options.retries) {
        const tries = attempt + 1;
        yield { type: 'error', code: INVALID_TOOL_CALL, message: `The model's tool call could not be read (${tries} ${tries === 1 ? 'attempt' : 'attempts'}): ${problem}` };
        return;
      }
      request = {
        ...request,
        items: [...request.items, { type: 'message', role: 'assistant', content: result.text }, { type: 'message', role: 'user', content: retryFeedback(problem, plan, result.problem ? result.calls.length : 0) }],
      };
      stream = await options.restart(request);
      continue;
    }
    if (result.held) yield result.calls.length > 0 && !cutShort ? { type: 'reasoning.delta', delta: result.held } : { type: 'text.delta', delta: result.held };
    const unread = shown.next(result.unread);
    if (unread) yield { type: 'text.delta', delta: unread };
    for (const call of result.calls) {
      const callId = newId('call');
      yield { type: 'tool_call.start', callId, name: call.name, ...(call.terminal && { terminal: true }) };
      yield { type: 'tool_call.delta', callId, delta: call.arguments };
    }
    yield { type: 'finish', finish: result.calls.length > 0 && !cutShort ? { reason: 'tool_calls', raw: result.finish.raw } : result.finish };
    return;
  }
}

async function* readAttempt(stream: TurnStream, tools: readonly string[], shown: ShownText, holdText: boolean): AsyncGenerator<TurnEvent, Attempt> {
  const scanner = new CallScanner();
  const attempt: Attempt = { text: '', calls: [], problem: null, unread: '', held: '', finish: null, failed: false };

  function* take(segments: ScannedSegment[], atEnd: boolean): Generator<TurnEvent> {
    for (const segment of segments) {
      let text: string;
      if (segment.kind === 'text') {
        // Blank text after the calls is not worth a message of its own.
        if (atEnd && attempt.calls.length > 0 && segment.text.trim() === '') continue;
        text = segment.text;
      } else {
        const reading = readCandidate(segment.body, segment.complete, tools);
        if (reading.kind === 'calls') {
          attempt.calls.push(...reading.calls);
          continue;
        }
        if (reading.kind === 'invalid') {
          attempt.problem ??= reading.problem;
          attempt.unread += segment.lead + segment.raw;
          continue;
        }
        text = segment.lead + segment.raw;
      }
      const delta = shown.next(text);
      if (delta && holdText) attempt.held += delta;
      else if (delta) yield { type: 'text.delta', delta };
    }
  }

  for await (const event of stream) {
    switch (event.type) {
      case 'text.delta':
        // Log probabilities no longer line up with text that is split and held: they are left out.
        attempt.text += event.delta;
        yield* take(scanner.push(event.delta), false);
        break;
      case 'finish':
        attempt.finish = event.finish;
        break;
      case 'error':
        attempt.failed = true;
        yield event;
        return attempt;
      default:
        yield event;
    }
  }
  yield* take(scanner.end(), true);
  return attempt;
}

/**
 * The text shown across a turn's attempts: blank text does not open a
 * message, and a retry's text is set apart from what an earlier attempt
 * already showed.
 */
class ShownText {
  #any = false;
  #inAttempt = false;

  startAttempt(): void {
    this.#inAttempt = false;
  }

  /** What to show of `text`; empty when nothing. */
  next(text: string): string {
    if (!this.#inAttempt) {
      text = text.trimStart();
      if (!text) return '';
      if (this.#any) text = `\n\n${text}`;
    }
    this.#any = this.#inAttempt = true;
    return text;
  }
}
