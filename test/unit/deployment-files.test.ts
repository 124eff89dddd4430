import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ENVIRONMENT_VARIABLES } from '../../src/config/environment-variables.ts';
import type { z } from 'zod';
import { GatewayConfig, resolveConfig } from '../../src/config/load-config.ts';
import { unwrapSchema } from '../../src/config/schema-introspection.ts';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('.env.example', () => {
  const example = read('.env.example');

  it('documents every environment variable loopgate reads', () => {
    for (const variable of ENVIRONMENT_VARIABLES) expect(example).toMatch(new RegExp(`^(# )?${variable.name}=`, 'm'));
  });

  it('is a valid configuration as shipped, and with every example line uncommented', () => {
    const asShipped = resolveConfig(parseEnv(example));
    expect(asShipped.ok ? [] : asShipped.problems).toEqual([]);
    // LOOPGATE_CONFIG names a path inside the container; the OpenAI key is the operator's to fill in (empty, start-up warns).
    const everything = example.replace(/^# ([A-Z_]+=)/gm, '$1').replace(/^LOOPGATE_CONFIG=.*$/m, '').replace(/^OPENAI_API_KEY=$/m, 'OPENAI_API_KEY=sk-example');
    const uncommented = resolveConfig(parseEnv(everything));
    expect(uncommented.ok ? [] : uncommented.problems).toEqual([]);
    expect(uncommented.warnings).toEqual([]);
  });
});

describe('docker-compose.yml', () => {
  const gateway = parseYaml(read('docker-compose.yml')).services.gateway;

  it('passes .env whole, reaches the host on Linux, mounts the configuration directory, and outlasts the drain', () => {
    expect(gateway.env_file).toEqual([{ path: '.env', required: false }]);
    expect(gateway.extra_hosts).toContain('host.docker.internal:host-gateway');
    expect(gateway.volumes).toContain('${LOOPGATE_CONFIG_DIR:-./config}:/config:ro');
    expect(Number.parseInt(gateway.stop_grace_period, 10)).toBeGreaterThan(30);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');

  it('pins both stages to the Node version the tests run on', () => {
    const nodeVersion = JSON.parse(read('node_modules/node/package.json')).version;
    expect(dockerfile).toContain(`ARG NODE_VERSION=${nodeVersion}\n`);
    expect(dockerfile.match(/^FROM .*$/gm)).toEqual(['FROM node:${NODE_VERSION}-bookworm-slim AS deps', 'FROM node:${NODE_VERSION}-bookworm-slim AS runtime']);
  });

  it('checks health on readiness, and passes flags to loopgate', () => {
    expect(dockerfile).toMatch(/^HEALTHCHECK [^\n]*\\\n[^\n]*\/readyz/m);
    expect(dockerfile).toContain('\nENTRYPOINT ["node", "src/main.ts"]\n');
  });
});

describe('config/loopgate.jsonc', () => {
  const file = read('config/loopgate.jsonc');

  /** Every key an object anywhere in the schema takes (inside lists, maps and each option of a union too). */
  function keysOf(schema: z.ZodType, found = new Set<string>()): Set<string> {
    const definition = unwrapSchema(schema)._zod.def as unknown as { type: string; shape?: Record<string, z.ZodType>; element?: z.ZodType; valueType?: z.ZodType; options?: z.ZodType[] };
    for (const [key, inner] of Object.entries(definition.shape ?? {})) {
      found.add(key);
      keysOf(inner, found);
    }
    for (const inner of [definition.element, definition.valueType, ...(definition.options ?? [])]) if (inner) keysOf(inner, found);
    return found;
  }

  it('and the README names every environment variable loopgate reads', () => {
    const readme = read('README.md');
    expect(ENVIRONMENT_VARIABLES.map((variable) => variable.name).filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });

  it('documents every key the configuration takes, as the README and --help say it does', () => {
    const undocumented = [...keysOf(GatewayConfig)].filter((key) => !file.includes(`"${key}"`));
    expect(undocumented).toEqual([]);
  });
});
