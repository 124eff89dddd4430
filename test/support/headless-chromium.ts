import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium (.ci/run installs it); playwright-core drives it and never downloads a browser of its own. */
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

export interface HeadlessChromium {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * A real headless Chromium with a fresh profile. Background networking,
 * sync and component updates are off: this machine's network is closed, and
 * a test browser has nobody to call but the gateway.
 */
export async function launchChromium(extraArgs: readonly string[] = []): Promise<HeadlessChromium> {
  const profile = mkdtempSync(join(tmpdir(), 'loopgate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', ...extraArgs],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
