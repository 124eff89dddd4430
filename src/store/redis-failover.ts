import { ReplyError, type Redis } from 'ioredis';

/**
 * Following a failover behind one name. Managed Redis (ElastiCache,
 * Memorystore, Azure Cache) and a Service in front of a Sentinel-run set fail
 * over behind one endpoint: the old primary, now a replica, keeps the open
 * connection and refuses every write on it (`READONLY`), and the gateway
 * wrote to it, refused, until restarted. A new connection reaches whatever
 * the name points at now — or, while the name still lags behind the
 * failover, the replica again: then it is made again 100 ms later, each
 * further one twice as long after, up to a second apart (a URL that names a
 * replica for good is connected to about once a second, not on every
 * command).
 */
const FIRST_GAP_MS = 100;
const LONGEST_GAP_MS = 1_000;
/** A refusal this long after the last reconnection began is a failover of its own: followed at once again. */
const NEW_FAILOVER_MS = 5_000;
/** A command sent while the connection was being made again (it never left) is sent again once it is back, this long after the reconnection began. */
const CAUGHT_IN_RECONNECTION_MS = 1_000;

interface Reconnection {
  /** When the connection is made again (later than the refusal when the last one was too recent). */
  startsAt: number;
  /** How long after this one the next may begin. */
  gapMs: number;
  /** True once the client is ready again, false if it was not within its connect timeout. */
  ready: Promise<boolean>;
  settled: boolean;
}

const reconnections = new WeakMap<Redis, Reconnection>();

/** The answer of a replica to a write: `READONLY You can't write against a read only replica.` (inside a script too). */
export function isReadOnlyRefusal(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('READONLY');
}

/**
 * A command that failed with `error` on a single Redis, sent again where the
 * primary is now when the failure was a replica's refusal, or the connection
 * being made again after one (sent as it closed, or while it was down: it
 * reached no primary either); as often as the name still leads to a replica,
 * within the client's command timeout. A refused write changed nothing
 * (Redis stops a script at its first write on a replica), so sending it
 * again is safe. Any other failure is thrown as it is.
 */
export async function sendAgainAfterFailover<T>(client: Redis, command: () => Promise<T>, error: unknown): Promise<T> {
  const giveUpAt = performance.now() + (client.options.commandTimeout ?? LONGEST_GAP_MS);
  let failure = error;
  for (;;) {
    const reconnection = isReadOnlyRefusal(failure) ? reconnectAfterRefusal(client) : reconnectionCaught(client, failure);
    if (reconnection === null || !(await within(reconnection, giveUpAt - performance.now()))) throw failure;
    try {
      return await command();
    } catch (again) {
      if (performance.now() >= giveUpAt) throw again;
      failure = again;
    }
  }
}

/**
 * The reconnection a command that failed for want of a connection was
 * caught in, if any: it goes again once that is ready. One sent while the
 * client was down never left; one cut off in flight (its connection closed,
 * which ioredis answers with its retry limit) only while the connection to a
 * replica is being closed, where no write can have been carried out. Never a
 * timeout: a command that timed out may have been carried out, and is not
 * sent twice.
 */
function reconnectionCaught(client: Redis, error: unknown): Promise<boolean> | null {
  if (!(error instanceof Error) || error instanceof ReplyError) return null;
  const last = reconnections.get(client);
  if (!last) return null;
  if (error.message.startsWith("Stream isn't writeable")) return !last.settled || performance.now() - last.startsAt < CAUGHT_IN_RECONNECTION_MS ? last.ready : null;
  const cutOff = error.name === 'MaxRetriesPerRequestError' || error.message.startsWith('Connection is closed');
  return cutOff && !last.settled ? last.ready : null;
}

/** The reconnection's outcome, or false once `ms` have passed (a command does not wait past its timeout for a reconnection that is late). */
async function within(reconnection: Promise<boolean>, ms: number): Promise<boolean> {
  if (ms <= 0) return false;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([reconnection, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Connects `client` again after a replica refused a write on it (or joins the reconnection under way); true once it is ready. */
function reconnectAfterRefusal(client: Redis): Promise<boolean> {
  const last = reconnections.get(client);
  if (last && !last.settled) return last.ready;
  const now = performance.now();
  const sameFailover = last !== undefined && now - last.startsAt < NEW_FAILOVER_MS;
  const delayMs = sameFailover ? Math.max(0, last.startsAt + last.gapMs - now) : 0;
  const next: Reconnection = { startsAt: now + delayMs, gapMs: sameFailover ? Math.min(last.gapMs * 2, LONGEST_GAP_MS) : FIRST_GAP_MS, ready: reconnect(client, delayMs), settled: false };
  void next.ready.then(() => (next.settled = true));
  reconnections.set(client, next);
  return next.ready;
}

/** Whether `client` is being connected again after a replica's refusal: its connection closing then is no outage. */
export function reconnectingAfterRefusal(client: Redis): boolean {
  return reconnections.get(client)?.settled === false;
}

async function reconnect(client: Redis, delayMs: number): Promise<boolean> {
  if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
  const ready = new Promise<boolean>((resolve) => {
    const done = (isReady: boolean) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(isReady);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), client.options.connectTimeout ?? 1_000);
    client.on('ready', onReady);
  });
  client.disconnect(true);
  return ready;
}
