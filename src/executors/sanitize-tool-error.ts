import { jsonTextTooDeep } from '../protocol/json-depth.ts';
import { REQUEST_LIMITS } from '../protocol/request-limits.ts';
import { escapeRegExp } from '../util/escape-reg-exp.ts';
import { headerSecrets, SecretRedactor } from '../util/secret-redactor.ts';
import { requestServerHeaders } from './mcp/request-server-settings.ts';
import { dropStackTraces, INTERNAL, scrubIpAddresses, scrubUrls } from './scrub-error-text.ts';
import type { ToolContext } from './tool-executor.ts';

/** Longest error text the model is given; the message comes first, so the head is what is kept. */
export const MAX_TOOL_ERROR_CHARS = 4_000;

export interface ToolErrorSanitizerOptions {
  /** The operator's MCP servers: wherever their addresses appear, their names stand instead. */
  servers: readonly { name: string; url: string }[];
  /** Configured credentials (configured-secrets.ts). */
  secrets: SecretRedactor;
  maxChars?: number;
}

/**
 * Cleans a failed tool call's output before the model — and the client's
 * output item — sees it (seed 003: error feedback must not expose system
 * internals): stack-trace lines are dropped; the operator's MCP servers'
 * URLs and host names become the server's name, other internal URLs and IP
 * addresses `[internal]`; configured secrets and the request's MCP header
 * values are blanked; length is bounded. The message itself stays, so the
 * model can still act on it. JSON outputs (`{"error": "…"}`) are cleaned
 * string by string and stay JSON. Successful outputs never come here.
 */
export class ToolErrorSanitizer {
  /** Without operator servers or configured secrets: still drops traces, internal addresses and excess length. */
  static readonly basic = new ToolErrorSanitizer({ servers: [], secrets: SecretRedactor.none });
  readonly #secrets: SecretRedactor;
  readonly #maxChars: number;
  /** Operator server names by host (`host:port`) and host name. */
  readonly #serverByHost = new Map<string, string>();
  /** The operator's hosts standing alone in text (`connect ECONNREFUSED mcp.corp:9000`). */
  readonly #bareHost: RegExp | null;

  constructor(options: ToolErrorSanitizerOptions) {
    this.#secrets = options.secrets;
    this.#maxChars = options.maxChars ?? MAX_TOOL_ERROR_CHARS;
    const alone: string[] = [];
    for (const server of options.servers) {
      const url = new URL(server.url);
      if (!this.#serverByHost.has(url.host)) this.#serverByHost.set(url.host, server.name);
      if (!this.#serverByHost.has(url.hostname)) this.#serverByHost.set(url.hostname, server.name);
      // A one-word host name ("mcp") is also an ordinary word: alone, it is replaced only with its port.
      alone.push(url.port ? url.host : `${url.hostname}:${defaultPort(url)}`);
      if (/[.:]/.test(url.hostname)) alone.push(url.hostname);
    }
    const hosts = [...new Set(alone)].sort((a, b) => b.length - a.length).map(escapeRegExp);
    this.#bareHost = hosts.length > 0 ? new RegExp(`(?<![\\w.-])(${hosts.join('|')})(?![\\w-]|\\.[\\w-])`, 'gi') : null;
  }

  sanitize(output: string, context: Pick<ToolContext, 'mcpServers'>): string {
    const headers = context.mcpServers.flatMap(({ tool }) => headerSecrets(requestServerHeaders(tool)));
    const requestSecrets = headers.length > 0 ? new SecretRedactor(headers) : SecretRedactor.none;
    const clean = (text: string) => this.#clean(text, requestSecrets);
    const structured = parseStructured(output);
    if (structured === undefined) return clean(output);
    let changed = false;
    const cleaned = mapStrings(structured, (text) => {
      const result = clean(text);
      changed ||= result !== text;
      return result;
    });
    const json = changed ? JSON.stringify(cleaned) : output;
    // Each string is bounded; an output of many strings is bounded as a whole, and stays a JSON error.
    return json.length <= 4 * this.#maxChars ? json : JSON.stringify({ error: bound(json, this.#maxChars) });
  }

  #clean(text: string, requestSecrets: SecretRedactor): string {
    // Secrets first: they may sit inside a URL or a trace line about to be rewritten.
    const redacted = requestSecrets.redact(this.#secrets.redact(text));
    const withoutUrls = scrubUrls(dropStackTraces(redacted), (url) => {
      const server = this.#serverByHost.get(url.host) ?? this.#serverByHost.get(url.hostname);
      return server === undefined ? null : serverMention(server);
    });
    // The operator's hosts by name before internal addresses in general, so a server's own address reads as the server.
    const named = this.#bareHost ? withoutUrls.replace(this.#bareHost, (host: string) => this.#mentionOfHost(host.toLowerCase())) : withoutUrls;
    return bound(scrubIpAddresses(named), this.#maxChars);
  }

  #mentionOfHost(host: string): string {
    const server = this.#serverByHost.get(host) ?? this.#serverByHost.get(host.replace(/:\d+$/, ''));
    return server === undefined ? INTERNAL : serverMention(server);
  }
}

function serverMention(name: string): string {
  return `[mcp:${name}]`;
}

function defaultPort(url: URL): string {
  return url.protocol === 'https:' ? '443' : '80';
}

/** A JSON object or array, or undefined for anything else (plain text, or nesting deeper than a request may carry). */
function parseStructured(text: string): object | undefined {
  const start = text.trimStart()[0];
  if ((start !== '{' && start !== '[') || jsonTextTooDeep(text, REQUEST_LIMITS.maxJsonDepth)) return undefined;
  try {
    return JSON.parse(text) as object;
  } catch {
    return undefined;
  }
}

function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((entry) => mapStrings(entry, map));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, mapStrings(entry, map)]));
  return value;
}

function bound(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, maxChars)}… [truncated]` : text;
}
