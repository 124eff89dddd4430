import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The package version (package.json), as `--version` prints it. */
export const VERSION: string = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

/** What `GET /version` says about this process. */
export interface BuildInfo {
  version: string;
  /** The build: LOOPGATE_BUILD (set when the image is built), else the checkout's git commit; null when neither is known. */
  build: string | null;
  node: string;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

let known: Promise<BuildInfo> | null = null;

/** This process's version and build, found once: from the environment, else by asking git about the checkout it runs from. */
export function buildInfo(env: NodeJS.ProcessEnv = process.env): Promise<BuildInfo> {
  known ??= findBuild(env).then((build) => ({ version: VERSION, build, node: process.version }));
  return known;
}

async function findBuild(env: NodeJS.ProcessEnv): Promise<string | null> {
  const given = env.LOOPGATE_BUILD?.trim();
  if (given) return given;
  // An image carries no .git; a checkout without git installed neither answers: both mean unknown.
  return new Promise((resolve) => {
    execFile('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT, timeout: 2_000, windowsHide: true }, (error, stdout) => {
      const commit = String(stdout).trim();
      resolve(error || !/^[0-9a-f]{7,40}$/.test(commit) ? null : commit);
    });
  });
}
