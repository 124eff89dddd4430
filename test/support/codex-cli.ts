import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { OutboundRecorder } from './outbound-recorder.ts';

const CODEX = fileURLToPath(new URL('../../node_modules/.bin/codex', import.meta.url));

export interface CodexRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `codex exec`, the real CLI from @openai/codex, each time with a
 * CODEX_HOME of the test's making. Every connection it makes beyond loopback
 * ends at `outbound` (it honours HTTPS_PROXY), which the tests expect to stay
 * empty: no update check, plugin sync or analytics leaves the machine.
 */
export class CodexCli {
  readonly outbound = new OutboundRecorder();
  readonly #environment: Record<string, string>;
  #proxyEnvironment: Record<string, string> = {};

  /** `environment`: what every run gets besides PATH, HOME and CODEX_HOME (the key a provider's `env_key` names, say). */
  constructor(environment: Record<string, string> = {}) {
    this.#environment = environment;
  }

  async start(): Promise<void> {
    this.#proxyEnvironment = OutboundRecorder.proxyEnvironment(await this.outbound.start());
  }

  close(): Promise<void> {
    return this.outbound.close();
  }

  /** A CODEX_HOME `config.toml` whose model provider is the gateway at `baseURL` (its key in LOOPGATE_KEY). */
  static gatewayConfig(baseURL: string, model: string): string {
    return [
      `model = "${model}"`,
      'model_provider = "loopgate"',
      // No update check, no plugin sync from GitHub and ChatGPT, no analytics: only the gateway is reached.
      'check_for_update_on_startup = false',
      '[features]',
      'plugins = false',
      '[analytics]',
      'enabled = false',
      '[model_providers.loopgate]',
      'name = "loopgate"',
      `base_url = "${baseURL}"`,
      'wire_api = "responses"',
      'env_key = "LOOPGATE_KEY"',
      '',
    ].join('\n');
  }

  exec(home: string, workdir: string, prompt: string, extra: { before?: string[]; options?: string[]; env?: Record<string, string> } = {}): Promise<CodexRun> {
    return new Promise((resolve, reject) => {
      const args = ['exec', ...(extra.before ?? []), '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', ...(extra.options ?? []), prompt];
      const child = spawn(CODEX, args, {
        cwd: workdir,
        env: { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home, RUST_LOG: 'error', ...this.#environment, ...extra.env, ...this.#proxyEnvironment },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (piece) => (stdout += piece));
      child.stderr.on('data', (piece) => (stderr += piece));
      const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
      child.once('error', reject);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  }
}
