import { REQUEST_LIMITS } from '../../protocol/request-limits.ts';
import { imageTypeOf } from '../../util/image-type.ts';
import type { AttachedImage } from '../tool-executor.ts';

/** A part of an MCP tool result (MCP's `CallToolResult.content`: text, image, audio, resource_link, resource), as far as the gateway reads it. */
interface ContentPart {
  type: string;
  text?: string;
  /** Base64, of an image or audio clip. */
  data?: string;
  mimeType?: string;
  uri?: string;
  name?: string;
  description?: string;
  resource?: { uri?: string; mimeType?: string; text?: string; blob?: string };
}

/** An MCP tool result as the model gets it: its text, and the images that go with it. */
export interface ToolResultOutput {
  text: string;
  images: AttachedImage[];
}

/** The image types vision models take. */
const VISION_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * An MCP tool result as the model gets it. Text parts stay as they are.
 *
 * With `attachImages`, images of a type vision models take are handed on as
 * images (data URLs), as many as fit in what one inline image may be
 * (`REQUEST_LIMITS.maxImageChars`, so a client resending them passes), each
 * named in the text where it was.
 *
 * Everything else that is not text is described, not dumped: an image or
 * audio clip becomes its kind, type and size, since its base64 would cost
 * the model tens of thousands of tokens and show it nothing. A resource link
 * becomes its name and URI, and an embedded resource its text, or its URI,
 * type and size when binary. `structuredContent` stands in when the result
 * has no content at all.
 */
export function toolResultOutput(result: Record<string, unknown>, attachImages: boolean): ToolResultOutput {
  const parts = Array.isArray(result.content) ? (result.content as ContentPart[]) : [];
  const images: AttachedImage[] = [];
  let budget = REQUEST_LIMITS.maxImageChars;
  const lines = parts.map((part) => {
    // Attached as what its bytes are: a tool that labels a JPEG screenshot `image/png` must not fail the model call it goes to.
    const type = attachImages && part.type === 'image' && part.data ? (imageTypeOf(part.data) ?? part.mimeType ?? '') : '';
    const url = VISION_TYPES.has(type) ? `data:${type};base64,${part.data}` : null;
    if (url !== null && url.length <= budget) {
      budget -= url.length;
      images.push({ type: 'input_image', image_url: url, detail: 'auto' });
      return `[image ${images.length}${details(type, part.data)}, attached]`;
    }
    return describePart(part);
  });
  const text = lines.join('\n');
  return { text: text || (result.structuredContent ? JSON.stringify(result.structuredContent) : ''), images };
}

function describePart(part: ContentPart): string {
  switch (part.type) {
    case 'text':
      return part.text ?? '';
    case 'image':
    case 'audio':
      return `[${part.type}${details(part.mimeType, part.data)}, not shown to the model]`;
    case 'resource_link':
      return `[resource link: ${[part.name, part.uri].filter(Boolean).join(' ')}${part.mimeType ? ` (${part.mimeType})` : ''}${part.description ? `: ${part.description}` : ''}]`;
    case 'resource': {
      const resource = part.resource ?? {};
      if (typeof resource.text === 'string') return resource.text;
      return `[resource ${resource.uri ?? ''}${details(resource.mimeType, resource.blob)}, not shown to the model]`;
    }
    default:
      // A kind MCP adds later: small enough to read as it is.
      return JSON.stringify(part);
  }
}

/** ` (image/png, 61 KB)`: the type and the decoded size of base64 data. */
function details(mimeType: string | undefined, base64: string | undefined): string {
  const bytes = base64 ? Math.floor((base64.length * 3) / 4) - (base64.endsWith('==') ? 2 : base64.endsWith('=') ? 1 : 0) : 0;
  const size = bytes >= 1024 ? `${Math.round(bytes / 1024)} KB` : `${bytes} bytes`;
  return ` (${[mimeType, size].filter(Boolean).join(', ')})`;
}
