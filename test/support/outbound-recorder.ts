import { createServer, type AddressInfo, type Server } from 'node:net';

/**
 * A stand-in HTTP(S) proxy that forwards nothing: it records the first line
 * of every connection made through it (`CONNECT chatgpt.com:443 HTTP/1.1`,
 * `GET http://…`) and closes it. Point a client's `HTTPS_PROXY`/`HTTP_PROXY`
 * at it, with `NO_PROXY` naming loopback, to prove the client reaches no host
 * but the ones on loopback.
 */
export class OutboundRecorder {
  readonly attempts: string[] = [];
  #server: Server | null = null;

  async start(): Promise<string> {
    const server = createServer((socket) => {
      socket.once('data', (data) => {
        this.attempts.push(data.toString('latin1').split('\r\n')[0] ?? '');
        socket.destroy();
      });
      socket.on('error', () => {});
    });
    this.#server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Environment variables that send every non-loopback request through this recorder. */
  static proxyEnvironment(url: string): Record<string, string> {
    return { HTTPS_PROXY: url, HTTP_PROXY: url, ALL_PROXY: url, https_proxy: url, http_proxy: url, all_proxy: url, NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' };
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}
