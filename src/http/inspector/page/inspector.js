// The loopgate inspector: recent responses, and one response as a timeline
// that fills in while it runs. Plain DOM, no build step. Everything shown
// comes from /v1/inspector/…, with the key kept in this tab's sessionStorage.
// Text from the gateway is only ever set as text, never parsed as HTML.
import { sseEvents } from './sse-events.js';

const KEY_STORAGE = 'loopgate-inspector-key';
const LIST_EVERY_MS = 1_000;
const POLL_EVERY_MS = 500;
const RECONNECT_MS = 500;
const STREAM_LOG_MAX = 300;
const RUNNING = new Set(['queued', 'in_progress']);
const TERMINAL_EVENTS = new Set(['response.completed', 'response.failed', 'response.incomplete']);

const $ = (id) => document.getElementById(id);

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

/** A GET on the inspector's API (relative, so a path prefix in front of the gateway works too). */
async function api(path, signal) {
  const key = sessionStorage.getItem(KEY_STORAGE);
  const response = await fetch(new URL(`../v1/inspector/${path}`, location.href), { headers: key ? { authorization: `Bearer ${key}` } : {}, signal });
  if (!response.ok) {
    const body = await response.json().catch(() => null);
    throw new ApiError(response.status, body?.error?.message ?? `HTTP ${response.status}`);
  }
  return response;
}

/** An element with properties, dataset entries and children (strings become text). */
function el(tag, { data, ...props } = {}, ...children) {
  const element = Object.assign(document.createElement(tag), props);
  Object.assign(element.dataset, data ?? {});
  element.append(...children.filter((child) => child !== null && child !== undefined));
  return element;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const duration = (ms) => (ms === null || ms === undefined ? '–' : ms < 1_000 ? `${ms} ms` : `${(ms / 1_000).toFixed(2)} s`);
const tokens = (usage) => (usage ? `${usage.input} / ${usage.output}` : '–');
const time = (seconds) => new Date(seconds * 1_000).toLocaleTimeString();
const notice = (text) => ($('notice').textContent = text);
const badge = (status) => el('span', { className: `status status-${status}` }, status);

// ---- Recent responses -------------------------------------------------------

let listTimer = null;
/** How many of the replica's recent responses the list shows: more on request, up to all it keeps. */
const LIST_PAGE = 50;
let listLimit = LIST_PAGE;

async function refreshList() {
  clearTimeout(listTimer);
  try {
    const { data } = await (await api(`responses?limit=${listLimit}`)).json();
    renderList(data);
    // A full page may have more behind it.
    $('more').hidden = data.length < listLimit;
    notice('');
  } catch (error) {
    // Without a (valid) key there is nothing to show or poll for: the key form starts it again.
    if (error.status === 401) {
      renderList([]);
      $('more').hidden = true;
      // A key was given and refused: say so, with the gateway's own words, rather than ask for one.
      return notice(sessionStorage.getItem(KEY_STORAGE) ? `The gateway refused this key: ${error.message}` : 'This gateway needs an API key: enter one above.');
    }
    notice(`Could not load responses: ${error.message}`);
  }
  listTimer = setTimeout(refreshList, LIST_EVERY_MS);
}

function renderList(responses) {
  const rows = responses.map((response) => {
    const calls = response.failed_tool_calls > 0 ? `${response.tool_calls} (${response.failed_tool_calls} failed)` : String(response.tool_calls);
    const row = el(
      'tr',
      { className: current?.id === response.id ? 'selected' : '', data: { responseId: response.id, status: response.status, tenant: response.tenant } },
      el('td', {}, time(response.created_at)),
      el('td', { className: 'id' }, response.id, response.background ? el('small', {}, ' background') : null),
      el('td', {}, badge(response.status)),
      el('td', {}, response.model),
      el('td', {}, response.tenant),
      el('td', { className: 'number' }, String(response.turns ?? '–')),
      el('td', { className: 'number' }, calls),
      el('td', { className: 'number' }, tokens(response.tokens)),
      el('td', { className: 'number' }, duration(response.duration_ms)),
    );
    row.addEventListener('click', () => select(response.id, response.tenant));
    return row;
  });
  $('responses').tBodies[0].replaceChildren(...rows);
  $('empty').hidden = responses.length > 0;
}

// ---- One response -----------------------------------------------------------

/** The response shown: its id, tenant (once known) and what stops watching it. */
let current = null;

function select(id, tenant) {
  current?.controller.abort();
  current = { id, tenant, status: null, background: false, refresh: null, controller: new AbortController() };
  history.replaceState(null, '', `#${id}`);
  for (const row of $('responses').tBodies[0].rows) row.classList.toggle('selected', row.dataset.responseId === id);
  $('stream-log').replaceChildren();
  $('stream').hidden = true;
  $('detail-notice').textContent = '';
  void watch(current);
}

/**
 * Shows the response, then keeps it current while it runs. Turns and tool
 * calls change between events (a model call or a tool running says nothing
 * until it ends), so the timeline is re-read on a timer while it runs — and
 * at once on every event of a background response's resumable stream.
 */
async function watch(view) {
  const { signal } = view.controller;
  view.refresh = coalesced(() => loadTimeline(view));
  await view.refresh();
  if (!RUNNING.has(view.status)) return following(view, null);
  const ticker = setInterval(() => void view.refresh(), POLL_EVERY_MS);
  try {
    const streamed = view.background && (await followStream(view));
    while (!streamed && RUNNING.has(view.status) && !signal.aborted) {
      following(view, 'polling');
      await sleep(POLL_EVERY_MS);
    }
  } finally {
    clearInterval(ticker);
    if (!signal.aborted) await view.refresh();
    following(view, null);
  }
}

async function loadTimeline(view) {
  try {
    const query = view.tenant ? `?tenant=${encodeURIComponent(view.tenant)}` : '';
    const timeline = await (await api(`responses/${encodeURIComponent(view.id)}${query}`, view.controller.signal)).json();
    if (view !== current) return;
    view.tenant = timeline.response.tenant;
    view.status = timeline.response.status;
    view.background = timeline.response.background;
    $('detail-notice').textContent = '';
    renderTimeline(timeline);
  } catch (error) {
    if (view.controller.signal.aborted) return;
    if (error.status === 404 || error.status === 401) {
      // Gone, or not this key's: nothing more to follow.
      view.status = null;
      $('detail').hidden = true;
    }
    $('detail-notice').textContent = error.status === 404 ? `No response ${view.id} that this key may see.` : `Could not load ${view.id}: ${error.message}`;
  }
}

/**
 * Follows a background response through its resumable stream, resuming
 * after the last event seen when the connection drops. True once it ended
 * (or the view changed); false when the stream cannot be read, for polling
 * to take over.
 */
async function followStream(view) {
  const { signal } = view.controller;
  let after = -1;
  $('stream').hidden = false;
  while (!signal.aborted) {
    following(view, 'stream');
    try {
      const query = new URLSearchParams({ tenant: view.tenant });
      if (after >= 0) query.set('starting_after', String(after));
      const response = await api(`responses/${encodeURIComponent(view.id)}/events?${query}`, signal);
      for await (const event of sseEvents(response.body)) {
        after = event.sequence_number;
        logEvent(event);
        if (TERMINAL_EVENTS.has(event.type)) return true;
        void view.refresh();
      }
    } catch (error) {
      if (error instanceof ApiError) return signal.aborted;
    }
    await sleep(RECONNECT_MS);
    // Ended while the stream was away: the timeline already says how.
    if (!RUNNING.has(view.status)) return true;
  }
  return true;
}

/** Runs `task` at most once at a time; calls meanwhile fold into one more run. */
function coalesced(task) {
  let running = null;
  let again = false;
  const run = async () => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await task();
      } while (again);
    })();
    try {
      await running;
    } finally {
      running = null;
    }
  };
  return run;
}

function following(view, how) {
  if (view !== current) return;
  const state = $('live-state');
  state.dataset.following = how ?? 'no';
  state.textContent = how === 'stream' ? '● following live through its resumable event stream' : how === 'polling' ? '● following live' : '';
}

function logEvent(event) {
  const item = event.item;
  const what = item ? ` ${item.type}${item.name ? ` ${item.name}` : ''}${item.status ? ` (${item.status})` : ''}` : '';
  if (event.type.endsWith('.delta')) return;
  const log = $('stream-log');
  log.append(el('li', { data: { type: event.type } }, `#${event.sequence_number} ${event.type}${what}`));
  while (log.childElementCount > STREAM_LOG_MAX) log.firstElementChild.remove();
}

function renderTimeline(timeline) {
  const { response } = timeline;
  const detail = $('detail');
  detail.hidden = false;
  detail.dataset.status = response.status;
  detail.dataset.source = timeline.source;
  $('detail-title').replaceChildren(response.id, ' ', badge(response.status));
  const facts = [
    ['model', response.model + (response.provider ? ` via ${response.provider}` : '')],
    ['tenant', response.tenant],
    ['created', time(response.created_at) + (response.background ? ', background' : '')],
    ['duration', duration(response.duration_ms) + (RUNNING.has(response.status) ? ' so far' : '')],
    ['turns', String(response.turns ?? '–')],
    ['tokens in / out', tokens(response.tokens)],
    ...(response.error ? [['error', `${response.error.code}: ${response.error.message}`]] : []),
    ...(response.incomplete_reason ? [['reason', response.incomplete_reason]] : []),
    ['source', timeline.source === 'live' ? 'watched on this replica' : 'rebuilt from the stored response (no turns or timings)'],
  ];
  $('detail-summary').replaceChildren(...facts.flatMap(([name, value]) => [el('dt', {}, name), el('dd', {}, value)]));
  $('timeline').replaceChildren(...timelineEntries(timeline));
}

function timelineEntries({ response, turns, tool_calls: calls, approvals, left_out: leftOut }) {
  const scale = Math.max(response.duration_ms ?? 0, 1);
  const callsOf = (turn) => calls.filter((call) => call.turn === turn);
  const approvalsOf = (turn) => approvals.filter((approval) => approval.turn === turn);
  const entries = [];
  if (callsOf(0).length > 0) entries.push(group('Continuing the paused turn', callsOf(0), approvalsOf(0), scale));
  for (const turn of turns) {
    const finish = turn.duration_ms === null ? 'running…' : `${duration(turn.duration_ms)} · ${turn.finish ?? 'no finish'}`;
    const entry = group(`Turn ${turn.turn} · ${finish}`, callsOf(turn.turn), approvalsOf(turn.turn), scale, turn);
    entry.dataset.turn = String(turn.turn);
    entry.dataset.state = turn.duration_ms === null ? 'running' : 'done';
    entries.push(entry);
  }
  if (callsOf(null).length > 0 || approvalsOf(null).length > 0) entries.push(group('Tool calls', callsOf(null), approvalsOf(null), scale));
  if (leftOut > 0) entries.push(el('li', { className: 'left-out' }, `${leftOut} more entries were not kept`));
  if (!RUNNING.has(response.status)) entries.push(el('li', { className: 'end', data: { status: response.status } }, badge(response.status), ` after ${duration(response.duration_ms)}`));
  return entries;
}

function group(title, calls, approvals, scale, span = null) {
  const items = [
    ...calls.map((call) => {
      const outcome = call.status === 'running' ? 'running…' : call.status === 'failed' ? `failed: ${call.error ?? ''}` : call.status ?? 'not run here';
      const meta = [call.executor, call.duration_ms === null ? null : duration(call.duration_ms)].filter(Boolean).join(' · ');
      return el('li', { className: 'tool-call', data: { name: call.name, status: call.status ?? 'none' } }, bar(call, scale), el('strong', {}, call.name), meta ? ` · ${meta}` : '', ` · ${outcome}`);
    }),
    ...approvals.map((approval) => el('li', { className: 'approval', data: { name: approval.name } }, `approval requested: ${approval.name}`)),
  ];
  return el('li', { className: 'turn' }, span ? bar(span, scale) : null, el('span', { className: 'title' }, title), items.length > 0 ? el('ol', {}, ...items) : null);
}

/** Where a turn or call sits within the response, as a bar (sized through the CSSOM: no inline styles). */
function bar(span, scale) {
  if (span.started_ms === null || span.started_ms === undefined) return null;
  const element = el('span', { className: 'bar' });
  element.style.marginLeft = `${Math.min(100, (span.started_ms / scale) * 100)}%`;
  element.style.width = `${Math.max(0.5, Math.min(100, ((span.duration_ms ?? scale - span.started_ms) / scale) * 100))}%`;
  return el('span', { className: 'track' }, element);
}

// ---- Start ------------------------------------------------------------------

$('key-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const key = $('key').value.trim();
  if (key) sessionStorage.setItem(KEY_STORAGE, key);
  $('key').value = '';
  void refreshList();
  if (current) select(current.id, null);
});

$('more').addEventListener('click', () => {
  listLimit += LIST_PAGE * 2;
  void refreshList();
});

$('forget').addEventListener('click', () => {
  sessionStorage.removeItem(KEY_STORAGE);
  current?.controller.abort();
  current = null;
  $('detail').hidden = true;
  void refreshList();
});

$('open-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const id = $('open-id').value.trim();
  if (id) select(id, null);
});

void refreshList();
if (location.hash.length > 1) openFromLink(location.hash.slice(1));

/** A link's `#<id>`; one mangled in copying (a cut-off %-escape) is said, not thrown. */
function openFromLink(fragment) {
  let id;
  try {
    id = decodeURIComponent(fragment);
  } catch {
    $('detail-notice').textContent = `The link names no response id that can be read: #${fragment}`;
    return;
  }
  select(id, null);
}
