/**
 * Browsers cannot set `Authorization` on a WebSocket: a page offers its API
 * key as a subprotocol instead, `openai-insecure-api-key.<key>` — OpenAI's
 * own convention for browser WebSockets (its SDK's browser Realtime client
 * sends it). "Insecure" because the key is in the page, as it is for any
 * page that calls the API itself.
 */
const KEY_PROTOCOL_PREFIX = 'openai-insecure-api-key.';

/** The API key a WebSocket upgrade offers as a subprotocol; null when it offers none. */
export function keyOfferedAsProtocol(header: string | string[] | undefined): string | null {
  if (typeof header !== 'string') return null;
  for (const protocol of header.split(',')) {
    const trimmed = protocol.trim();
    if (trimmed.startsWith(KEY_PROTOCOL_PREFIX) && trimmed.length > KEY_PROTOCOL_PREFIX.length) return trimmed.slice(KEY_PROTOCOL_PREFIX.length);
  }
  return null;
}

/**
 * The subprotocol the gateway answers with. A browser fails the connection
 * unless one it offered is chosen, so: the first that carries no key (say
 * `openresponses`: the handshake's answer then does not repeat the key),
 * else the key's own.
 */
export function chooseProtocol(offered: ReadonlySet<string>): string | false {
  let keyProtocol: string | false = false;
  for (const protocol of offered) {
    if (!protocol.startsWith(KEY_PROTOCOL_PREFIX)) return protocol;
    keyProtocol ||= protocol;
  }
  return keyProtocol;
}
