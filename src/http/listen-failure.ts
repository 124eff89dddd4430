/**
 * Why the gateway could not listen, in words that name the setting to
 * change: Node's own errors (`getaddrinfo ENOTFOUND …`, `listen EADDRINUSE`)
 * name neither HOST nor PORT.
 */
export function listenFailure(error: unknown, server: { host: string; port: number }): string {
  const code = (error as { code?: unknown } | null)?.code;
  switch (code) {
    case 'EADDRINUSE':
      return `port ${server.port} (PORT, server.port) is in use on ${server.host}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return `the listen address ${server.host} (HOST, server.host) does not resolve`;
    case 'EADDRNOTAVAIL':
      return `the listen address ${server.host} (HOST, server.host) is not an address of this machine`;
    case 'EACCES':
      return `port ${server.port} (PORT, server.port) needs privileges this process lacks`;
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
