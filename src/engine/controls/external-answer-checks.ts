import type { TextFormatParam } from '../../protocol/create-response-request.ts';
import type { AnswerCheck } from './answer-check.ts';

/** The operator's own validator (`loop.outputValidation.validator`). */
export type AnswerValidatorConfig =
  /** POSTs `{answer, text_format}`; expects `{valid, errors?}`. */
  | { type: 'http'; url: string; headers: Record<string, string>; timeoutMs: number }
  /** Calls an operator MCP tool (`<server>__<tool>`) with `{answer, text_format}`; expects `{valid, errors?}` as its text output. */
  | { type: 'mcp'; tool: string };

/** The validator could not judge: the response fails (`output_validator_failed`) rather than pass an unchecked answer. */
export class AnswerValidatorError extends Error {}

/** The check the operator's validator makes, for one response. */
export function externalAnswerCheck(config: AnswerValidatorConfig, format: TextFormatParam | null): AnswerCheck {
  const body = (answer: string) => ({ answer, text_format: format ?? { type: 'text' } });
  if (config.type === 'http') {
    return {
      name: 'validator',
      async problems({ text, signal }) {
        let reply: Response;
        try {
          reply = await fetch(config.url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...config.headers },
            body: JSON.stringify(body(text)),
            signal: AbortSignal.any([signal, AbortSignal.timeout(config.timeoutMs)]),
          });
        } catch (error) {
          throw new AnswerValidatorError(`The output validator could not be reached (${error instanceof Error ? error.name : 'error'}).`);
        }
        if (!reply.ok) throw new AnswerValidatorError(`The output validator answered HTTP ${reply.status}.`);
        return verdictProblems(await reply.text());
      },
    };
  }
  return {
    name: 'validator',
    async problems({ text, toolContext, signal }) {
      const offered = toolContext.offered.get(config.tool);
      if (!offered) throw new AnswerValidatorError(`The output validator tool '${config.tool}' is not available (its MCP server is not answering).`);
      const result = await offered.executor.execute({ callId: 'loopgate_validator', name: config.tool, arguments: JSON.stringify(body(text)) }, toolContext, signal);
      if (result.isError) throw new AnswerValidatorError(`The output validator tool '${config.tool}' failed.`);
      return verdictProblems(result.output);
    },
  };
}

/** `{valid: true}`, or `{valid: false, errors: [...]}`; anything else is the validator's fault. */
function verdictProblems(text: string): string[] {
  let verdict: unknown;
  try {
    verdict = JSON.parse(text);
  } catch {
    throw new AnswerValidatorError('The output validator did not answer with JSON.');
  }
  if (verdict === null || typeof verdict !== 'object' || typeof (verdict as { valid?: unknown }).valid !== 'boolean') {
    throw new AnswerValidatorError('The output validator answered without a boolean "valid".');
  }
  const { valid, errors } = verdict as { valid: boolean; errors?: unknown };
  if (valid) return [];
  const listed = Array.isArray(errors) ? errors.filter((entry): entry is string => typeof entry === 'string').slice(0, 20) : [];
  return listed.length > 0 ? listed : ['The output validator rejected the answer.'];
}
