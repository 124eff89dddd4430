import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';

export interface GatewayProcess {
  child: ChildProcess;
  origin: string;
  baseURL: string;
  /** Every pino JSON line the process has written so far. */
  logs: Record<string, any>[];
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Lines on stdout that were not JSON (there must be none: log shippers parse every line). */
  notJson: string[];
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `node src/main.ts` — what `npm start` runs — with the given environment, on a free port. */
export async function startGatewayProcess(env: Record<string, string>): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('../../src/main.ts', import.meta.url))], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', LOOPGATE_CONFIG: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, any>[] = [];
  const notJson: string[] = [];
  let buffered = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (piece: string) => (stderr += piece));
  const origin = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (piece: string) => {
      buffered += piece;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        let entry: Record<string, any>;
        try {
          entry = JSON.parse(line) as Record<string, any>;
        } catch {
          notJson.push(line);
          continue;
        }
        logs.push(entry);
        const match = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(entry.msg ?? '');
        if (match) resolve(match[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`gateway exited with ${code}: ${stderr}`)));
  });
  return {
    child,
    origin,
    baseURL: `${origin}/v1`,
    logs,
    stderr: () => stderr,
    notJson,
    async stop() {
      // A process killed by a signal has no exit code but is gone all the same.
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      return code as number | null;
    },
  };
}

/**
 * For a describe block: a gateway process on `upstream` (its URL as
 * `OPENAI_BASE_URL`, with `env`), started before its tests and stopped, with
 * the upstream, after them. Returns the running gateway's getter.
 */
export function useGatewayProcess(upstream: { start(): Promise<string>; close(): Promise<void> }, env: Record<string, string>): () => GatewayProcess {
  let gateway: GatewayProcess | null = null;
  beforeAll(async () => {
    gateway = await startGatewayProcess({ OPENAI_BASE_URL: await upstream.start(), OPENAI_API_KEY: 'k', ...env });
  });
  afterAll(async () => {
    await gateway?.stop();
    await upstream.close();
  });
  return () => gateway!;
}
