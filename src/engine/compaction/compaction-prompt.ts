/**
 * The two texts compaction puts before a model: the request that makes it
 * write the summary, and the message that stands for a compaction item when
 * the conversation goes on.
 */

/**
 * Sent as the last user message of the summarising call. The conversation's
 * own `instructions` stay the system prompt, so the call shares its prefix
 * (and the upstream's prompt cache) with the conversation's regular turns.
 */
export const COMPACTION_REQUEST = [
  'Stop here: the conversation above is being compacted. Write the summary that will replace it; the next model sees only this summary, plus the user messages, which are kept verbatim.',
  '',
  'Keep everything needed to carry on without the full history:',
  '- facts established, and the user\'s goals, constraints and preferences;',
  '- decisions taken, and why;',
  '- tool calls that mattered and their results: exact values, identifiers, error messages;',
  '- names of files, functions, commands, URLs and other identifiers, written exactly;',
  '- open tasks, unanswered questions, and the next step that was about to be taken.',
  '',
  'Leave out small talk and whatever was later superseded. If the conversation already holds a summary of an earlier part, fold it in. Write plain, dense prose or bullet points, without a preamble. Do not answer the user, call tools or continue the conversation: write only the summary.',
].join('\n');

/** The user message a compaction item becomes for the model. */
export function summaryMessageText(summary: string): string {
  return `Summary of the earlier conversation (compacted to save context):\n\n${summary}`;
}

/** The output a call still open when the window was compacted is given, so upstreams see every call answered. */
export const UNANSWERED_CALL_OUTPUT = 'No result: the conversation was compacted before this call was answered.';
