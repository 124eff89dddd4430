import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContextLengthExceeded } from '../../src/errors/context-length-exceeded.ts';
import { GatewayError } from '../../src/errors/gateway-error.ts';
import { loadConfig } from '../../src/config/load-config.ts';
import { ModelRouter } from '../../src/providers/model-router.ts';
import type { Provider, TurnEvent, TurnRequest } from '../../src/providers/provider.ts';
import { MemoryDeploymentHealth } from '../../src/providers/routing/deployment-health.ts';
import { DeploymentAtLimit } from '../../src/providers/routing/deployment-limits.ts';
import { decideFailover, retryAfterMs } from '../../src/providers/routing/failover-decision.ts';
import { RoutedProvider, type Deployment, type RoutingPolicy } from '../../src/providers/routing/routed-provider.ts';
import { weightedOrder } from '../../src/providers/routing/weighted-order.ts';
import { turnRequest } from '../support/turn-request.ts';

const configDirectory = mkdtempSync(join(tmpdir(), 'loopgate-routing-'));
let configFiles = 0;
/** Loads `file` as the configuration file, with no environment beside it. */
function load(file: unknown) {
  const path = join(configDirectory, `config-${configFiles++}.json`);
  writeFileSync(path, JSON.stringify(file));
  return loadConfig({ LOOPGATE_CONFIG: path });
}

const policy: RoutingPolicy = { retries: 2, backoffMs: 1, maxRetryAfterMs: 50, cooldownMs: 60_000, failuresBeforeCooldown: 2 };

/** A provider answering each call from a queue of outcomes (an error is thrown), recording the model names it was sent. */
function scripted(name: string, outcomes: (Error | 'ok')[] = []): Provider & { models: string[] } {
  const models: string[] = [];
  return {
    name,
    models,
    async startTurn(request: TurnRequest) {
      models.push(request.model);
      const outcome = outcomes.shift() ?? 'ok';
      if (outcome !== 'ok') throw outcome;
      return [{ type: 'text.delta' as const, delta: name }];
    },
    listModels: async () => [],
    close: async () => {},
  };
}

const deployment = (provider: Provider, weight = 1): Deployment => ({ id: `${provider.name}/m-${provider.name}`, provider, providerName: provider.name, upstreamModel: `m-${provider.name}`, weight });
const serverError = () => new GatewayError({ status: 502, type: 'upstream_error', code: 'upstream_error', message: 'boom' });
const rateLimited = (retryAfter: string) => new GatewayError({ status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', message: 'slow', headers: { 'retry-after': retryAfter } });
// A fixed draw: the first candidate always comes first.
const first = () => 0;

describe('RoutedProvider', () => {
  it('moves past a 5xx to the next deployment and names the one that served', async () => {
    const a = scripted('a', [serverError()]);
    const b = scripted('b');
    const routed = new RoutedProvider({ alias: 'x', deployments: [deployment(a), deployment(b)], policy, health: new MemoryDeploymentHealth(), random: first });
    await routed.startTurn(turnRequest({ model: 'x' }), new AbortController().signal);
    expect([a.models, b.models]).toEqual([['m-a'], ['m-b']]);
    expect(routed.servedBy).toEqual({ deployment: 'b/m-b', providerName: 'b', upstreamModel: 'm-b' });
  });

  it('a 4xx is the request\'s fault: thrown at once, nothing else tried', async () => {
    const a = scripted('a', [new GatewayError({ status: 400, type: 'invalid_request_error', code: null, message: 'bad' })]);
    const b = scripted('b');
    const routed = new RoutedProvider({ alias: 'x', deployments: [deployment(a), deployment(b)], policy, health: new MemoryDeploymentHealth(), random: first });
    await expect(routed.startTurn(turnRequest(), new AbortController().signal)).rejects.toMatchObject({ status: 400 });
    expect(b.models).toEqual([]);
  });

  it('one deployment: retries it after a back-off, up to retries + 1 attempts, then throws the last error', async () => {
    const a = scripted('a', [serverError(), serverError(), serverError(), serverError()]);
    const routed = new RoutedProvider({ alias: 'x', deployments: [deployment(a)], policy, health: new MemoryDeploymentHealth() });
    await expect(routed.startTurn(turnRequest(), new AbortController().signal)).rejects.toMatchObject({ status: 502 });
    expect(a.models).toHaveLength(3);
  });

  it('a retry-after beyond maxRetryAfterMs is not waited for', async () => {
    const a = scripted('a', [rateLimited('60'), rateLimited('60')]);
    const routed = new RoutedProvider({ alias: 'x', deployments: [deployment(a)], policy, health: new MemoryDeploymentHealth() });
    await expect(routed.startTurn(turnRequest(), new AbortController().signal)).rejects.toMatchObject({ status: 429 });
    expect(a.models).toHaveLength(1);
  });

  it('a retry-after beyond maxRetryAfterMs ends that deployment\'s tries only: another is still tried again', async () => {
    const a = scripted('a', [rateLimited('60')]);
    const b = scripted('b', [serverError()]);
    const routed = new RoutedProvider({ alias: 'x', deployments: [deployment(a), deployment(b)], policy, health: new MemoryDeploymentHealth(), random: first });
    await routed.startTurn(turnRequest(), new AbortController().signal);
    expect([a.models, b.models]).toEqual([['m-a'], ['m-b', 'm-b']]);
    expect(routed.servedBy?.deployment).toBe('b/m-b');
  });

  it('an overloaded or 5xx answer that says when to come back cools its deployment down at once, as a 429 does', async () => {
    const health = new MemoryDeploymentHealth();
    const overloaded = () => new GatewayError({ status: 503, type: 'server_error', code: 'upstream_overloaded', message: 'busy', headers: { 'retry-after': '20' }, upstreamRetry: { 'retry-after': '20' } });
    const a = scripted('a', [overloaded(), overloaded()]);
    const b = scripted('b');
    const routed = new RoutedProvider({ alias: 'x', deployments: [deployment(a), deployment(b)], policy: { ...policy, maxRetryAfterMs: 30_000 }, health, random: first });
    for (let index = 0; index < 3; index++) await routed.startTurn(turnRequest(), new AbortController().signal);
    // Cooled down by the first refusal, below failuresBeforeCooldown: the next requests go straight to b.
    expect([a.models.length, b.models.length]).toEqual([1, 3]);
  });

  it('failures in a row cool a deployment down; cooled ones are skipped while another is healthy', async () => {
    const health = new MemoryDeploymentHealth();
    const a = scripted('a', [serverError(), serverError()]);
    const b = scripted('b');
    const routed = new RoutedProvider({ alias: 'x', deployments: [deployment(a), deployment(b)], policy, health, random: first });
    for (let index = 0; index < 4; index++) await routed.startTurn(turnRequest(), new AbortController().signal);
    expect(a.models).toHaveLength(2);
    expect(b.models).toHaveLength(4);
    expect(await health.coolingDown(['a/m-a', 'b/m-b'])).toEqual(new Set(['a/m-a']));
  });

  it('a call every healthy deployment refused goes on to one cooling down before asking the refusing one again', async () => {
    const health = new MemoryDeploymentHealth();
    const a = scripted('a');
    const b = scripted('b', [serverError(), serverError(), serverError()]);
    const routed = new RoutedProvider({ alias: 'x', deployments: [deployment(a), deployment(b)], policy, health, random: first });
    await health.recordFailure('a/m-a', 1, 60_000);
    await routed.startTurn(turnRequest(), new AbortController().signal);
    expect([a.models, b.models]).toEqual([['m-a'], ['m-b']]);
    expect(routed.servedBy?.deployment).toBe('a/m-a');
  });

  it('input tokens are counted by one cooling down when the healthy ones refuse', async () => {
    const health = new MemoryDeploymentHealth();
    const counting = (name: string, outcome: Error | number) => ({ ...scripted(name), countInputTokens: async () => { if (outcome instanceof Error) throw outcome; return outcome; } });
    const routed = new RoutedProvider({ alias: 'x', deployments: [deployment(counting('a', 7)), deployment(counting('b', serverError()))], policy, health, random: first });
    await health.recordFailure('a/m-a', 1, 60_000);
    expect(await routed.countInputTokens!(turnRequest(), new AbortController().signal)).toBe(7);
  });

  it('a deployment whose streams break off inside is cooled down as one refusing is; a finished call resets its count', async () => {
    const health = new MemoryDeploymentHealth();
    async function* breaking(): AsyncGenerator<TurnEvent> {
      yield { type: 'text.delta', delta: 'par' };
      yield { type: 'error', code: 'upstream_connection_error', message: 'reset' };
    }
    async function* finishing(): AsyncGenerator<TurnEvent> {
      yield { type: 'text.delta', delta: 'ok' };
      yield { type: 'finish', finish: { reason: 'stop' } as never };
    }
    const outcomes = [breaking, finishing, breaking, breaking, finishing];
    const a: Provider & { models: string[] } = { ...scripted('a'), async startTurn(request: TurnRequest) { a.models.push(request.model); return outcomes.shift()!(); } };
    const b = scripted('b');
    const routed = new RoutedProvider({ alias: 'x', deployments: [deployment(a), deployment(b)], policy, health, random: first });
    const readAll = async () => {
      for await (const _event of (await routed.startTurn(turnRequest(), new AbortController().signal)) as AsyncIterable<TurnEvent>);
    };
    // broken, finished (the count starts again), broken, broken: two in a row cool it down.
    for (let index = 0; index < 4; index++) await readAll();
    expect(await health.coolingDown(['a/m-a'])).toEqual(new Set(['a/m-a']));
    await routed.startTurn(turnRequest(), new AbortController().signal);
    expect([a.models.length, b.models.length]).toEqual([4, 1]);
  });

  it('context-length refusal: served by the fallback, which is named', async () => {
    const a = scripted('a', [new ContextLengthExceeded('too long')]);
    const big = scripted('big');
    const routed = new RoutedProvider({
      alias: 'x',
      deployments: [deployment(a)],
      policy,
      health: new MemoryDeploymentHealth(),
      contextFallback: () => ({ provider: big, upstreamModel: 'm-big', servedBy: () => ({ deployment: 'big/m-big', providerName: 'big', upstreamModel: 'm-big' }) }),
    });
    await routed.startTurn(turnRequest(), new AbortController().signal);
    expect(big.models).toEqual(['m-big']);
    expect(routed.servedBy?.deployment).toBe('big/m-big');
  });

  it('a deployment at its own limit is passed over without using an attempt or cooling down', async () => {
    const a = scripted('a', [DeploymentAtLimit.of('a', { limit: 'requests', retryAfterMs: 30_000 })]);
    const b = scripted('b', [serverError()]);
    const c = scripted('c');
    const health = new MemoryDeploymentHealth();
    const routed = new RoutedProvider({ alias: 'x', deployments: [deployment(a), deployment(b), deployment(c)], policy: { ...policy, retries: 1 }, health, random: first });
    await routed.startTurn(turnRequest({ model: 'x' }), new AbortController().signal);
    // retries: 1 → two upstream calls, b's and c's; a's refusal by its limit is not one.
    expect([a.models, b.models, c.models]).toEqual([['m-a'], ['m-b'], ['m-c']]);
    expect(routed.servedBy?.deployment).toBe('c/m-c');
    expect(routed.calledBy?.deployment).toBe('c/m-c');
    expect(await health.coolingDown(['a/m-a'])).toEqual(new Set());
  });

  it('every deployment at its limit: a 429 with the soonest retry-after, and no upstream called', async () => {
    const a = scripted('a', [DeploymentAtLimit.of('a', { limit: 'requests', retryAfterMs: 30_000 })]);
    const b = scripted('b', [DeploymentAtLimit.of('b', { limit: 'tokens', retryAfterMs: 4_200 })]);
    const routed = new RoutedProvider({ alias: 'x', deployments: [deployment(a), deployment(b)], policy, health: new MemoryDeploymentHealth(), random: first });
    const error = await routed.startTurn(turnRequest({ model: 'x' }), new AbortController().signal).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DeploymentAtLimit);
    expect(error).toMatchObject({ status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', retryAfterMs: 4_200, headers: { 'retry-after': '5', 'retry-after-ms': '4200' } });
    expect(routed.servedBy).toBeNull();
    expect(routed.calledBy).toBeNull();
    // Before any call, the routed provider goes by its first deployment's name.
    expect(routed.name).toBe('a');
  });

  it('names the deployment of its latest call: the one refusing, then the one serving', async () => {
    const a = scripted('a', [serverError()]);
    const b = scripted('b', [new GatewayError({ status: 400, type: 'invalid_request_error', code: 'invalid_value', message: 'bad' })]);
    const routed = new RoutedProvider({ alias: 'x', deployments: [deployment(a), deployment(b)], policy, health: new MemoryDeploymentHealth(), random: first });
    await expect(routed.startTurn(turnRequest({ model: 'x' }), new AbortController().signal)).rejects.toMatchObject({ status: 400 });
    expect(routed.name).toBe('b');
    expect(routed.calledBy?.deployment).toBe('b/m-b');
    expect(routed.servedBy).toBeNull();
  });
});

describe('routing pieces', () => {
  it('weightedOrder draws by weight without replacement', () => {
    const candidates = [{ id: 'a', weight: 3 }, { id: 'b', weight: 1 }];
    expect(weightedOrder(candidates, () => 0).map((c) => c.id)).toEqual(['a', 'b']);
    expect(weightedOrder(candidates, () => 0.8).map((c) => c.id)).toEqual(['b', 'a']);
    expect(weightedOrder(candidates, () => 0.74).map((c) => c.id)).toEqual(['a', 'b']);
  });

  it('decideFailover: 429 and 5xx retry, 4xx gives up, context length is its own case', () => {
    expect(decideFailover(rateLimited('2'))).toEqual({ kind: 'retry', retryAfterMs: 2000 });
    // retry-after-ms, where an upstream sends it, is the finer of the two.
    expect(decideFailover(new GatewayError({ status: 429, type: 'rate_limit_error', code: null, message: 'slow', headers: { 'retry-after': '2', 'retry-after-ms': '1250' } }))).toEqual({ kind: 'retry', retryAfterMs: 1250 });
    expect(decideFailover(serverError())).toEqual({ kind: 'retry', retryAfterMs: null });
    expect(decideFailover(new GatewayError({ status: 503, type: 'server_error', code: 'upstream_overloaded', message: 'busy', headers: { 'retry-after': '3' }, upstreamRetry: { 'retry-after': '3' } }))).toEqual({ kind: 'retry', retryAfterMs: 3000 });
    // The gateway's own suggestion to the client (Anthropic's overload without a retry-after) is not the upstream's word.
    expect(decideFailover(new GatewayError({ status: 503, type: 'server_error', code: 'upstream_overloaded', message: 'busy', headers: { 'retry-after': '2' }, upstreamRetry: {} }))).toEqual({ kind: 'retry', retryAfterMs: null });
    expect(decideFailover(new GatewayError({ status: 404, type: 'x', code: null, message: 'm' }))).toEqual({ kind: 'give-up' });
    expect(decideFailover(new ContextLengthExceeded('too long'))).toEqual({ kind: 'context-length' });
    expect(decideFailover(new Error('a bug'))).toEqual({ kind: 'give-up' });
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(retryAfterMs('soon')).toBeNull();
  });

  it('config: deployments, contextFallback and routing load; unknown providers and fallbacks are refused', () => {
    const base = { providers: { one: { type: 'openai-chat', baseUrl: 'http://127.0.0.1:1/v1' }, two: { type: 'openai-chat', baseUrl: 'http://127.0.0.1:2/v1' } } };
    const config = load({ ...base, models: { m: { deployments: [{ provider: 'one' }, { provider: 'two', model: 'x', weight: 3 }], contextFallback: 'big' }, big: { provider: 'two' } }, routing: { retries: 4 } });
    expect(config.models.m!.deployments).toEqual([{ provider: 'one', weight: 1 }, { provider: 'two', model: 'x', weight: 3 }]);
    expect(config.routing).toMatchObject({ retries: 4, backoffMs: 250, cooldownMs: 30_000, failuresBeforeCooldown: 3 });
    expect(() => load({ ...base, models: { m: { deployments: [{ provider: 'nope' }] } } })).toThrow(/nope/);
    expect(() => load({ ...base, models: { m: { provider: 'one', contextFallback: 'missing' } } })).toThrow(/missing/);
    expect(() => load({ ...base, models: { m: {} } })).toThrow();
  });

  it('ModelRouter: a routed alias gets a fresh RoutedProvider per resolve; a fallback alias resolves without its own fallback', () => {
    const providers = new Map([['one', scripted('one')], ['two', scripted('two')]]);
    const router = new ModelRouter(providers, { m: { deployments: [{ provider: 'one' }, { provider: 'two' }], contextFallback: 'm' } }, 'one');
    const route = router.resolve('m');
    expect(route.provider).toBeInstanceOf(RoutedProvider);
    expect(router.resolve('m').provider).not.toBe(route.provider);
    expect(route.servedBy?.()).toBeNull();
    expect(router.resolve('m', { contextFallback: false }).provider).toBeInstanceOf(RoutedProvider);
  });
});
