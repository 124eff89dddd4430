import { invalidRequest } from '../../errors/gateway-error.ts';
import type { FunctionCallOutputPart, InputItem, UserContentPart } from '../../protocol/input-items.ts';
import { parseJsonWithinDepth } from '../../protocol/json-depth.ts';
import { REQUEST_LIMITS } from '../../protocol/request-limits.ts';
import { assertNever } from '../../util/assert-never.ts';
import { parseDataUrl } from '../../util/data-url.ts';
import { imageTypeOf } from '../../util/image-type.ts';
import type { TurnRequest } from '../provider.ts';
import { assistantTexts, instructionsText, separateInstructions } from '../wire-items.ts';
import { describedSchema } from '../described-schema.ts';
import { callSignatures, checksCallSignatures, decodeSignature, SKIP_SIGNATURE_VALIDATOR } from './thought-signatures.ts';
import type { GeminiContent, GeminiPart, GeminiRequest } from './gemini-wire.ts';

/** Thinking budgets per `reasoning.effort`; `none` turns thinking off where the model allows it; 32,768 is the most any Gemini model takes. */
const THINKING_BUDGET: Record<string, number> = { none: 0, minimal: 512, low: 2_048, medium: 8_192, high: 24_576, xhigh: 32_768, max: 32_768 };

/**
 * The budgets a model takes, as Google documents them: Flash 0–24,576, Flash-Lite
 * 512–24,576 (0 off), 2.5 Pro and 3 Pro 128–32,768 with no way to turn thinking
 * off. A budget outside them is Google's 400 ("The thinking budget (N) is
 * invalid", "does not support setting thinking_budget to 0"), so each effort's
 * is brought within: `none` becomes the least the model thinks where it
 * cannot stop.
 */
function thinkingBudgetFor(model: string, effort: string): number | undefined {
  const wanted = THINKING_BUDGET[effort];
  if (wanted === undefined) return undefined;
  const name = model.toLowerCase();
  const range = name.includes('flash-lite') ? { min: 512, max: 24_576, off: true } : name.includes('flash') ? { min: 1, max: 24_576, off: true } : name.includes('pro') ? { min: 128, max: 32_768, off: false } : { min: 1, max: 32_768, off: true };
  if (wanted === 0) return range.off ? 0 : range.min;
  return Math.min(range.max, Math.max(range.min, wanted));
}

const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif', heic: 'image/heic',
  pdf: 'application/pdf', mp4: 'video/mp4', webm: 'video/webm', mov: 'video/quicktime', txt: 'text/plain',
  // The documents and audio Gemini reads besides PDFs: labelled PDF, it would try to parse them as one.
  csv: 'text/csv', md: 'text/markdown', markdown: 'text/markdown', html: 'text/html', htm: 'text/html', xml: 'text/xml', json: 'application/json',
  js: 'text/javascript', py: 'text/x-python', css: 'text/css', rtf: 'text/rtf',
  mp3: 'audio/mpeg', wav: 'audio/wav', ogg: 'audio/ogg', flac: 'audio/flac', aac: 'audio/aac', m4a: 'audio/mp4', aiff: 'audio/aiff',
};

/** Translates one turn into a `generateContent` request body. */
export function convertToGeminiRequest(request: TurnRequest): GeminiRequest {
  const { system, contents } = convertConversation(request.instructions, request.items, request.historyLength, checksCallSignatures(request.model));
  const body: GeminiRequest = { contents };
  if (system) body.systemInstruction = { parts: [{ text: system }] };

  const choice = request.toolChoice;
  const allowed = typeof choice === 'object' && choice?.type === 'allowed_tools' ? choice.tools.map((tool) => tool.name) : null;
  if (request.tools.length > 0) {
    // JSON Schema as clients send it (`additionalProperties`, `$ref`…) goes in `parametersJsonSchema`; `parameters` takes only an OpenAPI subset.
    body.tools = [{ functionDeclarations: request.tools.map((tool) => ({ name: tool.name, ...(tool.description && { description: tool.description }), parametersJsonSchema: tool.parameters ?? { type: 'object', properties: {} } })) }];
    const mode = choice === null ? null : typeof choice === 'string' ? choice : choice.type === 'allowed_tools' ? (choice.mode ?? 'auto') : 'required';
    const named = typeof choice === 'object' && choice?.type === 'function' ? [choice.name] : allowed;
    if (mode || named) {
      const wire = mode === 'required' ? 'ANY' : mode === 'none' ? 'NONE' : named && mode === null ? 'ANY' : 'AUTO';
      // Google takes allowedFunctionNames only with ANY: under AUTO the model is shown only the allowed functions instead.
      if (wire === 'AUTO' && named) body.tools = [{ functionDeclarations: body.tools[0]!.functionDeclarations.filter((declaration) => named.includes(declaration.name)) }];
      body.toolConfig = { functionCallingConfig: { mode: wire, ...(named && wire === 'ANY' && { allowedFunctionNames: named }) } };
    }
  }

  const generation: NonNullable<GeminiRequest['generationConfig']> = {};
  if (request.maxOutputTokens !== null) generation.maxOutputTokens = request.maxOutputTokens;
  if (request.temperature !== null) generation.temperature = request.temperature;
  if (request.topP !== null) generation.topP = request.topP;
  if (request.presencePenalty !== null) generation.presencePenalty = request.presencePenalty;
  if (request.frequencyPenalty !== null) generation.frequencyPenalty = request.frequencyPenalty;
  if (request.logprobs) {
    generation.responseLogprobs = true;
    if (request.topLogprobs) generation.logprobs = request.topLogprobs;
  }
  const format = request.textFormat;
  if (format?.type === 'json_object' || format?.type === 'json_schema') {
    generation.responseMimeType = 'application/json';
    // Full JSON Schema goes in `responseJsonSchema` (`responseSchema` takes only an OpenAPI subset and rejects `additionalProperties`).
    if (format.type === 'json_schema' && format.schema) generation.responseJsonSchema = describedSchema(format.schema, format.description);
  }
  const budget = request.reasoningEffort ? thinkingBudgetFor(request.model, request.reasoningEffort) : undefined;
  // `none` on a model that cannot stop thinking: as little as it takes, its thoughts not shown.
  if (budget !== undefined) generation.thinkingConfig = request.reasoningEffort === 'none' ? { thinkingBudget: budget } : { includeThoughts: true, thinkingBudget: budget };
  // Summaries asked for without an effort: the model thinks as it does by default, and says so.
  else if (request.reasoningSummary !== null) generation.thinkingConfig = { includeThoughts: true };
  if (Object.keys(generation).length > 0) body.generationConfig = generation;
  return body;
}

function convertConversation(instructions: string | null, items: InputItem[], historyLength: number, placeholderSignatures: boolean): { system: string; contents: GeminiContent[] } {
  const contents: GeminiContent[] = [];
  const callNames = new Map<string, string>();
  const signatures = callSignatures(items);
  const push = (role: GeminiContent['role'], parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    // Consecutive turns of one role are one content upstream; parallel calls' responses must share one user turn.
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  for (const item of items) {
    if (item.type === 'function_call') callNames.set(item.call_id, item.name);
  }

  const pieces = separateInstructions(instructions, items, historyLength, (item, param) => {
    switch (item.type) {
      case 'message':
        if (item.role === 'user') {
          push('user', typeof item.content === 'string' ? textParts(item.content) : item.content.flatMap((part, partIndex) => userPart(part, `${param}.content[${partIndex}]`)));
        } else {
          push('model', assistantTexts(item).flatMap(textParts));
        }
        break;
      case 'reasoning': {
        const signed = item.encrypted_content ? decodeSignature(item.encrypted_content) : null;
        // Reasoning from other providers means nothing to Gemini; call signatures ride on their calls.
        if (signed?.part === 'thought') push('model', [{ text: signed.text, thought: true, thoughtSignature: signed.signature }]);
        if (signed?.part === 'text') {
          const lastText = contents.at(-1)?.role === 'model' ? contents.at(-1)!.parts.findLast((part) => part.text !== undefined && !part.thought) : undefined;
          if (lastText) lastText.thoughtSignature = signed.signature;
        }
        break;
      }
      case 'function_call': {
        const step = contents.at(-1)?.role === 'model' ? contents.at(-1)!.parts : [];
        // Only a step's first call carries a signature (parallel calls' others never do): that is the one a placeholder stands in for.
        const firstOfStep = !step.some((part) => part.functionCall);
        const signature = signatures.of(item) ?? (placeholderSignatures && firstOfStep ? SKIP_SIGNATURE_VALIDATOR : undefined);
        push('model', [{ functionCall: { id: item.call_id, name: item.name, args: parseArguments(item.arguments) }, ...(signature && { thoughtSignature: signature }) }]);
        break;
      }
      case 'function_call_output': {
        const name = callNames.get(item.call_id);
        if (!name) throw invalidRequest(`No function_call with call_id '${item.call_id}' precedes this output; Gemini needs the called function's name.`, `${param}.call_id`, 'invalid_value');
        push('user', functionResponse(item.call_id, name, item.output, `${param}.output`));
        break;
      }
      default:
        assertNever(item);
    }
  });
  leadStepsWithSignedCall(contents);
  // Gemini's context cache is an object made ahead, not a mark in the prompt: the pieces are one text.
  return { system: instructionsText(pieces), contents };
}

/**
 * Gemini signs only the first call of a step, and wants the signature back
 * on the step's first call. The gateway's output lists an MCP call (run by
 * the loop, shown as its own item) after the client's calls of the same
 * step, so a step the model began with an MCP call comes back with an
 * unsigned client call first: that call would take Google's placeholder and
 * the model's own signature would ride second, its reasoning skipped. The
 * signed call goes first again, as the model made it, and the responses
 * follow the calls' order.
 */
function leadStepsWithSignedCall(contents: GeminiContent[]): void {
  for (let index = 0; index < contents.length; index++) {
    const { role, parts } = contents[index]!;
    if (role !== 'model') continue;
    const first = parts.findIndex((part) => part.functionCall);
    const signed = parts.findIndex((part) => part.functionCall && part.thoughtSignature !== undefined && part.thoughtSignature !== SKIP_SIGNATURE_VALIDATOR);
    if (first < 0 || signed <= first) continue;
    parts.splice(first, 0, ...parts.splice(signed, 1));
    for (const part of parts) if (part.thoughtSignature === SKIP_SIGNATURE_VALIDATOR) delete part.thoughtSignature;
    const responses = contents[index + 1];
    if (responses?.role !== 'user') continue;
    const order = parts.flatMap((part) => (part.functionCall?.id ? [part.functionCall.id] : []));
    const rank = (part: GeminiPart) => {
      const at = part.functionResponse?.id ? order.indexOf(part.functionResponse.id) : -1;
      return at < 0 ? order.length : at;
    };
    // Stable: parts that answer no call of the step keep their place after the answers.
    responses.parts.sort((a, b) => (a.functionResponse && b.functionResponse ? rank(a) - rank(b) : 0));
  }
}

/** Gemini rejects empty text parts. */
function textParts(text: string): GeminiPart[] {
  return text ? [{ text }] : [];
}

function userPart(part: UserContentPart | FunctionCallOutputPart, param: string): GeminiPart[] {
  switch (part.type) {
    case 'input_text':
      return textParts(part.text);
    case 'input_image':
      if (!part.image_url) throw invalidRequest('An input_image needs an image_url for this upstream.', `${param}.image_url`, 'missing_required_parameter');
      return [media(part.image_url, 'image/jpeg')];
    case 'input_file': {
      if (part.file_data) {
        const data = parseDataUrl(part.file_data);
        return [{ inlineData: data ? { mimeType: data.mediaType, data: data.data } : { mimeType: mimeOf(part.filename ?? '', 'application/pdf'), data: part.file_data } }];
      }
      if (part.file_url) return [media(part.file_url, mimeOf(part.filename ?? '', 'application/pdf'))];
      throw invalidRequest('An input_file needs file_data or file_url.', param, 'missing_required_parameter');
    }
    case 'input_video':
      return [media(part.video_url, 'video/mp4')];
    default:
      return assertNever(part);
  }
}

/** A data URL goes inline; any other URL (https, gs://, a Files API URI) by reference. */
function media(url: string, fallbackMime: string): GeminiPart {
  const data = parseDataUrl(url);
  // An image's type as its bytes say it, whatever it was declared as.
  return data ? { inlineData: { mimeType: imageTypeOf(data.data) ?? data.mediaType, data: data.data } } : { fileData: { mimeType: mimeOf(url, fallbackMime), fileUri: url } };
}

function functionResponse(callId: string, name: string, output: string | FunctionCallOutputPart[], param: string): GeminiPart[] {
  if (typeof output === 'string') return [{ functionResponse: { id: callId, name, response: { output } } }];
  const text = output.flatMap((part) => (part.type === 'input_text' ? [part.text] : [])).join('');
  const attachments = output.flatMap((part, index) => (part.type === 'input_text' ? [] : userPart(part, `${param}[${index}]`)));
  return [{ functionResponse: { id: callId, name, response: { output: text } } }, ...attachments];
}

function parseArguments(text: string): Record<string, unknown> {
  try {
    // Deeper than a request may nest, serialising the body would overflow: such arguments count as not JSON.
    const value: unknown = parseJsonWithinDepth(text || '{}', REQUEST_LIMITS.maxJsonDepth);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function mimeOf(url: string, fallback: string): string {
  const extension = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(url)?.[1]?.toLowerCase();
  return (extension && MIME_BY_EXTENSION[extension]) || fallback;
}
