import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { assertEventStreamInvariants } from '../support/event-invariants.ts';
import { startGateway, type RunningGateway } from '../support/gateway.ts';
import { launchChromium, type HeadlessChromium } from '../support/headless-chromium.ts';
import { McpTestServer } from '../support/mcp-test-server.ts';
import { assertValidEventWithMcpItems, assertValidResponse, assertValidResponseWithMcpItems } from '../support/openresponses-schema.ts';
import { anthropic, openaiChat, type ModelTurn } from '../support/provider-flavors.ts';
import { ScriptedChatUpstream, type UpstreamReply } from '../support/scripted-chat-upstream.ts';
import { waitFor } from '../support/wait-for.ts';

const KEY_A = 'sk-browser-team-a-0123';
const KEY_B = 'sk-browser-team-b-0123';
const KEY_ADMIN = 'sk-browser-operator-0123';
const LABELS = ['first', 'second'];

/** Long enough for a person (and the page's list poll) to watch a turn go by. */
function slowly(reply: UpstreamReply): UpstreamReply {
  if (reply.kind === 'sse') return { ...reply, pauseMs: 40 };
  if (reply.kind === 'json') return { ...reply, delayMs: 300 };
  return reply;
}

/**
 * A tool that runs until the test lets it finish, call by call (by its
 * `label`), so the test sees the page show each call running and then done
 * — without guessing how long anything takes.
 */
class HeldTool {
  #gates = new Map<string, { open: Promise<void>; release: () => void }>();

  register(mcp: McpTestServer): void {
    mcp.extraTools.push((server) =>
      server.registerTool('hold', { description: 'Runs until released.', inputSchema: { label: z.string() } }, async ({ label }) => {
        await this.#gate(label).open;
        return { content: [{ type: 'text', text: `${label} released` }] };
      }),
    );
  }

  release(label: string): void {
    this.#gate(label).release();
  }

  /** New gates for the next test; whatever still waits is let go. */
  reset(): void {
    for (const gate of this.#gates.values()) gate.release();
    this.#gates = new Map();
  }

  #gate(label: string) {
    let gate = this.#gates.get(label);
    if (!gate) {
      let release = () => {};
      const open = new Promise<void>((resolve) => (release = resolve));
      gate = { open, release };
      this.#gates.set(label, gate);
    }
    return gate;
  }
}

/**
 * The inspector page in a real headless Chromium (Debian's, driven by
 * playwright-core): it asks for a key, lists the key's responses as they
 * start, and shows the one clicked as a timeline that fills in while it runs
 * — a background response through its resumable stream, a foreground one by
 * polling — without a reload.
 */
/**
 * Over two upstream APIs, not all four: the page shows what the inspector API
 * serves, whose data inspector-api.test.ts checks over every upstream; a third
 * browser run would render the same timeline again, at seconds per run.
 */
const pageFlavors = [openaiChat, anthropic];

describe.each(pageFlavors)('inspector page in Chromium over $name', (flavor) => {
  const upstream = new ScriptedChatUpstream();
  const mcp = new McpTestServer();
  const tool = new HeldTool();
  tool.register(mcp);
  let gateway: RunningGateway;
  let browser: HeadlessChromium;
  /** Script errors and console errors other than failed requests (those are in `httpErrors`). */
  let pageProblems: string[] = [];
  /** Requests the gateway refused, as "<status> <path>". */
  let httpErrors: string[] = [];
  const as = (apiKey: string) => new OpenAI({ baseURL: gateway.baseURL, apiKey, maxRetries: 0 });

  beforeAll(async () => {
    const [upstreamUrl, mcpUrl] = await Promise.all([upstream.start(), mcp.start()]);
    [gateway, browser] = await Promise.all([
      startGateway(upstreamUrl, {
        ...flavor.config(upstreamUrl),
        auth: { apiKeys: [{ key: KEY_A, tenant: 'team-a' }, { key: KEY_B, tenant: 'team-b' }, { key: KEY_ADMIN, tenant: 'ops', admin: true }] },
        inspector: { enabled: true },
        mcp: { servers: [{ name: 'tools', url: mcpUrl }] },
      }),
      launchChromium(),
    ]);
    // Three turns: the held tool, once in each of the first two, then a slow answer.
    upstream.setScript((request) => {
      const results = flavor.seen(request).filter((seen) => seen.kind === 'result').length;
      const turn: ModelTurn = results < 2 ? { calls: [{ id: `call_${LABELS[results]}`, name: 'tools__hold', args: { label: LABELS[results] } }] } : { textPieces: ['Both ', 'were ', 'released.'] };
      return slowly(flavor.render(request, turn));
    });
  });
  afterAll(async () => {
    tool.reset();
    await browser?.close();
    await gateway?.close();
    await Promise.all([upstream.close(), mcp.close()]);
  });
  beforeEach(() => {
    tool.reset();
    pageProblems = [];
    httpErrors = [];
  });

  /** A fresh tab (its own sessionStorage) on the inspector, with the key entered the way a person would. */
  async function openInspector(key: string): Promise<Page> {
    const page = await browser.context.newPage();
    // A step that never happens fails with its selector, well inside the test's own timeout.
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => pageProblems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageProblems.push(`console: ${message.text()}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) httpErrors.push(`${response.status()} ${new URL(response.url()).pathname}`);
    });
    await page.goto(`${gateway.origin}/inspector/`);
    await page.locator('#notice', { hasText: 'needs an API key' }).waitFor();
    await page.fill('#key', key);
    await page.click('#key-form button[type=submit]');
    // Set once: still there at the end means the page never reloaded.
    await page.evaluate(() => ((globalThis as { loadedOnce?: boolean }).loadedOnce = true));
    return page;
  }

  const stillTheSamePage = (page: Page) => page.evaluate(() => (globalThis as { loadedOnce?: boolean }).loadedOnce === true);
  /** The held tool's call in turn `turn`, in state `status`. */
  const callIn = (page: Page, turn: number, status: string) => page.locator(`#timeline li.turn[data-turn="${turn}"] li.tool-call[data-name="tools__hold"][data-status="${status}"]`);
  const row = (page: Page, id: string, status?: string) => page.locator(`#responses tr[data-response-id="${id}"]${status ? `[data-status="${status}"]` : ''}`);

  it('a background tool loop: listed as it starts, its timeline filling in live through the resumable stream — turn, tool call running, done, next turn, completed', async () => {
    const page = await openInspector(KEY_A);
    const queued = await as(KEY_A).responses.create({ model: flavor.model, input: 'Hold on twice, then tell me.', background: true });
    await row(page, queued.id).waitFor();
    await row(page, queued.id).click();
    await page.locator('#live-state[data-following="stream"]').waitFor();

    await callIn(page, 1, 'running').waitFor();
    await page.locator('#timeline li.turn[data-turn="1"][data-state="done"]').waitFor();
    expect(await page.locator('#timeline li.turn[data-turn="2"]').count()).toBe(0);
    // Each step below shows only if the page reads the response again while it runs.
    tool.release('first');
    await callIn(page, 1, 'completed').waitFor();
    await callIn(page, 2, 'running').waitFor();
    expect(await page.locator('#detail').getAttribute('data-status')).toBe('in_progress');
    expect(await page.locator('#timeline li.end').count()).toBe(0);

    tool.release('second');
    await callIn(page, 2, 'completed').waitFor();
    await page.locator('#timeline li.turn[data-turn="3"]').waitFor();
    await page.locator('#timeline li.end[data-status="completed"]').waitFor();
    await row(page, queued.id, 'completed').waitFor();
    await page.locator('#live-state[data-following="no"]').waitFor();
    expect(await page.locator('#stream-log li[data-type="response.completed"]').count()).toBe(1);
    // Two calls (each one mcp_call item) and the answer.
    expect(await page.locator('#stream-log li[data-type="response.output_item.added"]').count()).toBeGreaterThanOrEqual(3);

    const final = await as(KEY_A).responses.retrieve(queued.id);
    assertValidResponseWithMcpItems(final);
    expect(final.output_text).toBe('Both were released.');
    // What the page says is what the response was.
    const facts = Object.fromEntries(await page.locator('#detail-summary dt').evaluateAll((terms) => terms.map((term) => [term.textContent, term.nextElementSibling?.textContent])));
    expect(facts).toMatchObject({ tenant: 'team-a', turns: '3', 'tokens in / out': `${final.usage!.input_tokens} / ${final.usage!.output_tokens}` });
    expect(await stillTheSamePage(page)).toBe(true);
    expect(pageProblems).toEqual([]);
    // Only the first look, before the key was entered, was refused.
    expect(httpErrors).toEqual(['401 /v1/inspector/responses']);
  });

  it('lists 50 responses, and more on request up to all the replica keeps; a key the gateway refuses is said so, in its words', async () => {
    // Responses that call no model (generate: false): listed like any other, many in little time.
    const made = await Promise.all(Array.from({ length: 55 }, (_, index) => as(KEY_A).responses.create({ model: flavor.model, input: `quick ${index}`, generate: false } as never)));
    for (const response of made) assertValidResponse(response);
    const page = await openInspector(KEY_A);
    await row(page, made.at(-1)!.id).waitFor();
    expect(await page.locator('#responses tbody tr').count()).toBe(50);
    await page.click('#more');
    for (const response of made) await row(page, response.id).waitFor();
    await page.locator('#more').waitFor({ state: 'hidden' });

    const refused = await browser.context.newPage();
    await refused.goto(`${gateway.origin}/inspector/`);
    await refused.locator('#notice', { hasText: 'needs an API key' }).waitFor();
    await refused.fill('#key', 'sk-not-a-key-of-this-gateway');
    await refused.click('#key-form button[type=submit]');
    await refused.locator('#notice', { hasText: 'The gateway refused this key' }).waitFor();
    expect(await refused.locator('#notice').textContent()).toMatch(/API key/);
    await refused.close();
    expect(pageProblems).toEqual([]);
  });

  it('a link whose id was mangled in copying (a cut-off %-escape) says so, without an error on the page', async () => {
    const page = await browser.context.newPage();
    page.on('pageerror', (error) => pageProblems.push(`page error: ${error.message}`));
    await page.goto(`${gateway.origin}/inspector/#resp_ab%E0%A4%A`);
    await page.locator('#detail-notice', { hasText: 'no response id that can be read' }).waitFor({ timeout: 10_000 });
    expect(pageProblems).toEqual([]);
    await page.close();
  });

  it('a streamed foreground response followed by polling; each tenant key sees only its own responses, the admin key all', async () => {
    const pageA = await openInspector(KEY_A);
    const pageB = await openInspector(KEY_B);
    const mine = await as(KEY_A).responses.create({ model: flavor.model, input: 'first', background: true });
    const stream = await as(KEY_B).responses.create({ model: flavor.model, input: 'Hold on twice, then tell me.', stream: true });
    const events: any[] = [];
    const reading = (async () => {
      for await (const event of stream) events.push(event);
    })();
    await waitFor(() => events.length > 0, 10_000, 10);
    const theirs = events[0].response.id as string;

    await row(pageB, theirs).click();
    await pageB.locator('#live-state[data-following="polling"]').waitFor();
    await callIn(pageB, 1, 'running').waitFor();
    tool.release('first');
    await callIn(pageB, 2, 'running').waitFor();
    expect(await pageB.locator('#timeline li.end').count()).toBe(0);
    tool.release('second');
    await callIn(pageB, 2, 'completed').waitFor();
    await pageB.locator('#timeline li.end[data-status="completed"]').waitFor();
    await reading;
    expect(textOf(assertEventStreamInvariants(events, assertValidEventWithMcpItems))).toBe('Both were released.');
    await row(pageA, mine.id, 'completed').waitFor();

    // Each list has been refreshed since both responses existed: neither shows the other tenant's.
    await row(pageA, theirs).waitFor({ state: 'detached' });
    expect(await row(pageA, theirs).count()).toBe(0);
    expect(await row(pageB, mine.id).count()).toBe(0);
    // Opening the other tenant's response by id says it is not there.
    await pageB.fill('#open-id', mine.id);
    await pageB.click('#open-form button[type=submit]');
    await pageB.locator('#detail-notice', { hasText: 'that this key may see' }).waitFor();
    expect(await pageB.locator('#detail').isHidden()).toBe(true);

    const admin = await openInspector(KEY_ADMIN);
    await row(admin, mine.id).waitFor();
    await row(admin, theirs).waitFor();
    expect(await row(admin, theirs).getAttribute('data-tenant')).toBe('team-b');
    await row(admin, theirs).click();
    await admin.locator('#timeline li.end[data-status="completed"]').waitFor();
    for (const page of [pageA, pageB, admin]) expect(await stillTheSamePage(page)).toBe(true);
    expect(pageProblems).toEqual([]);
    expect(httpErrors.sort()).toEqual([...Array(3).fill('401 /v1/inspector/responses'), `404 /v1/inspector/responses/${mine.id}`]);
  });
});

function textOf(response: Record<string, any>): string {
  return response.output.flatMap((item: any) => (item.type === 'message' ? item.content.map((part: any) => part.text ?? '') : [])).join('');
}
