import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback TCP proxy that a test can cut and restore, to take a real
 * service (Redis, an MCP server) away from the gateway and give it back, or
 * turn into a black hole that accepts connections and never answers.
 */
export class TcpProxy {
  #target: { host: string; port: number };
  readonly #sockets = new Set<Socket>();
  #server: Server | null = null;
  #port = 0;
  #blackHole = false;

  constructor(targetUrl: string) {
    const url = new URL(targetUrl);
    this.#target = { host: url.hostname, port: Number(url.port) };
  }

  get url(): string {
    return `redis://127.0.0.1:${this.#port}`;
  }

  get port(): number {
    return this.#port;
  }

  async start(): Promise<void> {
    this.#server = createServer((client) => {
      if (this.#blackHole) {
        this.#sockets.add(client);
        client.on('close', () => this.#sockets.delete(client));
        client.on('error', () => {});
        return;
      }
      const upstream = connect(this.#target.port, this.#target.host);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.#server!.listen(this.#port, '127.0.0.1', resolve));
    this.#port = (this.#server.address() as AddressInfo).port;
  }

  /** Drops every connection and refuses new ones until `restore()`. */
  async cut(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    for (const socket of this.#sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Listens again on the same port. */
  async restore(): Promise<void> {
    await this.start();
  }

  /** New connections go to another server from now on (a name that moved, as a managed Redis's endpoint does in a failover); open ones stay where they are. */
  redirect(targetUrl: string): void {
    const url = new URL(targetUrl);
    this.#target = { host: url.hostname, port: Number(url.port) };
  }

  /** Drops every connection; new ones are accepted and never get a byte, until `forward()`. */
  blackHole(): void {
    this.#blackHole = true;
    for (const socket of this.#sockets) socket.destroy();
  }

  /** Forwards new connections again after `blackHole()`. */
  forward(): void {
    this.#blackHole = false;
  }

  async close(): Promise<void> {
    await this.cut();
  }
}
