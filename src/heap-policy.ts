import { executionAsyncResource } from 'node:async_hooks';
import { setFlagsFromString } from 'node:v8';

/**
 * How V8's collector should treat this process, set before anything else is
 * loaded (main.ts imports this module first).
 *
 * Allocation-site pretenuring is off. V8 watches which places in the code
 * make objects that live long and starts allocating those directly in the
 * old generation. In a gateway nearly everything is made for one request
 * and dies with it, but under load the first seconds can make a per-request
 * site look long-lived; once tenured, its objects die in the old generation
 * while still pointing at young ones, which every young collection then has
 * to keep and promote until the next full one. Measured under load
 * (the JSON load of bench/gateway-bench.ts, a fresh process each run):
 * with pretenuring on, 6 of 19 gateway processes fell into that state for
 * their whole life (five times the bytes promoted per young collection,
 * twice the full collections, up to 75% more CPU per response than the
 * others of the same series); with it off, none of 17.
 * The objects that do live long here (stored responses, pools, caches) are
 * few and are promoted once the ordinary way.
 */
setFlagsFromString('--no-allocation-site-pretenuring');

/**
 * One of Node's tick objects (what `process.nextTick` queues) is kept alive
 * for the life of the process.
 *
 * A tick object is an object literal with symbol keys, built along map
 * transitions from the plain object's map. Transitions to maps with no live
 * object are dropped by a full collection, and in this process's heap (many
 * objects built from `{}` with other first keys) `nextTick` never comes
 * back to building them inline afterwards: every call goes through the
 * runtime, property by property (`DefineKeyedOwnPropertyInLiteral`,
 * `MigrateToMap`). Measured on this machine: about 700 ns a call after the
 * first full collection against 90 ns before, and a response makes about
 * eight calls (Node's streams and HTTP server); the bare forwarder of the
 * benchmark never makes a full collection, so never pays it. One live object
 * of that map keeps it, and the transitions to it, in place.
 */
let keptTick: object | null = null;
// Inside a tick's callback, the resource Node is running is the tick object itself. Not caught by an async hook: one
// enabled even for a moment sets V8's promise hooks, and every `await` stays on V8's slow path after (81 → 110-130 ns).
process.nextTick(() => {
  keptTick = executionAsyncResource();
});
export const heldTickObject = (): object | null => keptTick;
