import type { ConfigPath } from './config-problem.ts';
import { urlSecrets } from '../util/secret-redactor.ts';
import { isSecretPath } from './mask-secrets.ts';

/**
 * Every secret value a configuration holds — the same ones `--check-config`
 * masks: provider and client API keys, MCP servers' header values, and the
 * credentials inside URLs (a Redis password, a token in a query string).
 */
export function configuredSecrets(config: unknown): string[] {
  const found = new Set<string>();
  collect(config, [], found);
  return [...found];
}

function collect(value: unknown, path: ConfigPath, found: Set<string>): void {
  if (typeof value === 'string') {
    if (isSecretPath(path)) {
      found.add(value);
      // The credential after a scheme ("Bearer <token>") may be echoed on its own.
      for (const part of value.split(/\s+/).slice(1)) found.add(part);
    }
    for (const secret of urlSecrets(value)) found.add(secret);
    return;
  }
  if (Array.isArray(value)) value.forEach((item, index) => collect(item, [...path, index], found));
  else if (value !== null && typeof value === 'object') for (const [key, inner] of Object.entries(value)) collect(inner, [...path, key], found);
}
