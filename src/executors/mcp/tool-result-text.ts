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

/**
 * An MCP tool result as the text a model reads. Text parts stay as they
 * are. What is not text is described, not dumped. An image or audio clip
 * becomes its kind, type and size: its base64, up to `maxOutputChars` of it,
 * would cost the model tens of thousands of tokens and show it nothing (a
 * browser tool's screenshot, say). A resource link becomes its name and URI,
 * and an embedded resource its text, or its URI, type and size when binary.
 * `structuredContent` stands in when the result has no content at all.
 */
export function toolResultText(result: Record<string, unknown>): string {
  const parts = Array.isArray(result.content) ? (result.content as ContentPart[]) : [];
  const text = parts.map(describePart).join('\n');
  return text || (result.structuredContent ? JSON.stringify(result.structuredContent) : '');
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
