import type { FunctionToolParam } from '../../protocol/create-response-request.ts';
import type { ToolUsePlan } from './tool-use-plan.ts';

/**
 * Everything the model is told about the text tool-call protocol, in one
 * place: the system prompt section, how earlier calls and results are
 * written back into the conversation, and the feedback on a broken call.
 * The wording of each part repeats the same call shape, so a model that
 * learns it from one place finds it again in the others.
 */

const CALL_SHAPE = '{"tool": "<tool name>", "parameters": {<arguments, as the tool\'s parameters schema describes>}, "terminate": false}';

/** Appended to the request's instructions (or standing alone) when the model may call tools. */
export function toolInstructions(plan: ToolUsePlan): string {
  if (plan.tools.length === 0) return plan.forbidden ? 'Do not call any tool in this reply: answer in plain text, without tool call JSON.' : '';
  const lines = [
    '# Tools',
    '',
    'You can call the tools listed below. To call one, write the call as a JSON object in exactly this form, on its own or in a ```json fenced block:',
    '',
    CALL_SHAPE,
    '',
    '- "tool" is the name of one of the tools below; "parameters" is a JSON object ({} when the tool takes no arguments).',
    '- "terminate": true says this call is your final action: once it has run, the conversation ends without another reply from you. Leave it false when you need to see the result.',
    plan.parallel ? '- To call several tools at once, write one call object after another.' : '- Call at most one tool per reply.',
    plan.answersInJson ? '- Write nothing but the calls in a reply that calls tools: your answer, in the required format, comes in a reply without calls.' : '- You may write a short sentence before a call, but nothing after it.',
    `- Each result comes back to you in a user message that begins with "${resultHeader('<call id>', '<tool name>')}".`,
    '- When you need no tool, answer in plain text, without tool call JSON.',
  ];
  if (plan.mustCall?.kind === 'any') lines.push('', 'You must call a tool in this reply.');
  if (plan.mustCall?.kind === 'named') lines.push('', `You must call the tool ${JSON.stringify(plan.mustCall.name)} in this reply.`);
  lines.push('', ...plan.tools.flatMap(describeTool));
  return lines.join('\n').trimEnd();
}

function describeTool(tool: FunctionToolParam): string[] {
  const parameters = tool.parameters ?? { type: 'object', properties: {} };
  return [`## ${tool.name}`, ...(tool.description ? [tool.description] : []), `Parameters: ${JSON.stringify(parameters)}`, ''];
}

/** An earlier call, as the model would have written it. */
export function renderCall(name: string, parameters: unknown): string {
  return JSON.stringify({ tool: name, parameters });
}

/** The first line of the user message that carries a call's result. */
export function resultHeader(callId: string, name: string | null): string {
  return name === null ? `Result of tool call ${callId}:` : `Result of tool call ${callId} (${name}):`;
}

/**
 * The user message that follows a reply whose call could not be read.
 * `readable`: calls of that reply that could be read; none of them was made
 * either (a reply's calls are made together), so all are asked for again.
 */
export function retryFeedback(problem: string, plan: ToolUsePlan, readable = 0): string {
  if (plan.forbidden) return `Your last reply could not be used: ${problem} Answer in plain text, without tool call JSON. Whatever you wrote before the call has already been shown, so do not repeat it.`;
  const otherwise =
    plan.mustCall === null
      ? 'If you need no tool, answer in plain text without tool call JSON.'
      : plan.mustCall.kind === 'named'
        ? `You must call the tool ${JSON.stringify(plan.mustCall.name)}.`
        : 'You must call a tool.';
  const again =
    readable === 0
      ? 'Write the call again'
      : `None of its calls was made, not even the ${readable === 1 ? 'one' : readable} that could be read: write every call of that reply again, each`;
  return [
    `Your last reply could not be used: ${problem}`,
    `${again} as a JSON object in exactly this form, on its own or in a \`\`\`json fenced block:`,
    CALL_SHAPE,
    `Whatever you wrote before the call has already been shown, so do not repeat it. ${otherwise}`,
  ].join('\n');
}

/** The problem with a reply that had to call a tool and did not. */
export function missingCallProblem(plan: ToolUsePlan): string {
  return plan.mustCall?.kind === 'named' ? `it does not call the tool ${JSON.stringify(plan.mustCall.name)}, and this reply must.` : 'it calls no tool, and this reply must.';
}
