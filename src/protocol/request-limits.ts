/**
 * The bounds on what one request may contain, checked before anything uses
 * it. Each is far above what real clients send (Codex CLI resends long
 * histories with dozens of tools; OpenAI's own API accepts these sizes) and
 * low enough that no request can exhaust the stack or the heap. The body as a
 * whole is bounded by `server.bodyLimitBytes` (50 MiB by default).
 */
export const REQUEST_LIMITS = {
  /**
   * Deepest nesting of objects and arrays anywhere in the body. Tool and
   * output JSON Schemas are the deepest things clients send, a few dozen
   * levels at most; thousands of levels would overflow the stack when the
   * upstream request is serialised. The same bound holds for JSON written
   * inside strings that the gateway parses (`arguments` of resent calls and
   * of the model's own), and for schemas MCP servers list. Not configurable:
   * the schemas below are built once, and no real client comes near it.
   */
  maxJsonDepth: 100,
  /** Input items in one request (a whole resent history). */
  maxInputItems: 20_000,
  /** Content parts of one message or tool output. */
  maxContentParts: 2_000,
  /**
   * Tools in one request, each function of a namespace counted; apart, the
   * tools the conversation's tool searches load. Codex sends a few dozen.
   */
  maxTools: 1_000,
  /**
   * MCP servers named in one request's `tools`: each is a connection and a
   * listing before the model is called. Real clients name a handful; the
   * session pool (`mcp.maxSessions`, 256) holds several such requests at once.
   */
  maxMcpServers: 64,
  /**
   * Characters of one JSON Schema as JSON text: a tool's `parameters`, a
   * structured output's `text.format.schema`. Real ones are a few KB; this
   * is a quarter of a million tokens, more than any model's context.
   */
  maxSchemaChars: 1_048_576,
  /** Characters of one text: a message, instructions, a tool output, arguments, a reasoning summary. */
  maxTextChars: 10_485_760,
  /** Characters of one tool or format description. */
  maxDescriptionChars: 1_048_576,
  /** Characters of one inline image (a data URL) and of one inline file (base64). */
  maxImageChars: 20_971_520,
  maxFileChars: 33_554_432,
  /** Characters of an id, a name or a label the gateway echoes or stores. */
  maxIdChars: 256,
  /** Characters of a URL, and of one MCP header value (HTTP servers refuse longer header lines). */
  maxUrlChars: 8_192,
} as const;
