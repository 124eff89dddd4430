import { invalidRequest } from '../errors/gateway-error.ts';
import type { FunctionCallOutputPart, InputItem } from '../protocol/input-items.ts';
import type { Provider, TurnRequest } from './provider.ts';
import { RequestRewritingProvider } from './request-rewriting-provider.ts';

/**
 * A model that takes no images (`vision: false` on its provider or alias: a
 * text-only local model, say): a provider in front of another. Images a tool
 * returned (an MCP browser's screenshot) would make its upstream refuse the
 * whole call in the middle of a loop, so each becomes a line of text saying
 * an image was there; the stored output keeps the image, for the client and
 * for a later model that sees. An image in a message of this request is the
 * client's own: refused with a 400 naming it, never dropped. One inherited
 * from earlier turns (answered then by a model that sees) becomes the line
 * of text too, so the conversation can go on with this model.
 */
export class NoVisionProvider extends RequestRewritingProvider {
  constructor(inner: Provider) {
    super(inner, withoutImages);
  }
}

const NOT_SHOWN = (index: number) => `[image ${index} not shown: this model takes no images]`;

/** `request` as a model without vision is sent it: every image replaced by a line saying it was there. */
export function withoutImages(request: TurnRequest): TurnRequest {
  if (!request.items.some(holdsImage)) return request;
  const items = request.items.map((item, index): InputItem => {
    if (!holdsImage(item)) return item;
    if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') return { ...item, output: describeImages(item.output as FunctionCallOutputPart[]) } as InputItem;
    if (index >= request.historyLength) {
      throw invalidRequest(
        `The model '${request.model}' takes no images (its provider or alias is configured with vision: false): remove the input_image parts of this request's input, or send them to a model that takes images.`,
        'input',
        'unsupported_parameter',
      );
    }
    return { ...item, content: describeImages((item as Extract<InputItem, { type: 'message' }>).content as FunctionCallOutputPart[]) } as InputItem;
  });
  return { ...request, items };
}

function holdsImage(item: InputItem): boolean {
  const parts = item.type === 'message' ? item.content : item.type === 'function_call_output' || item.type === 'custom_tool_call_output' ? item.output : null;
  return Array.isArray(parts) && parts.some((part) => part.type === 'input_image');
}

function describeImages(parts: readonly FunctionCallOutputPart[]): FunctionCallOutputPart[] {
  let seen = 0;
  return parts.map((part) => (part.type === 'input_image' ? { type: 'input_text', text: NOT_SHOWN(++seen) } : part));
}
