/** A background response, named the way every replica can find it. */
export interface BackgroundRef {
  tenant: string;
  id: string;
}

export interface LeaseRenewal {
  /** Responses someone asked to cancel (from any replica). */
  cancelled: BackgroundRef[];
  /** Responses this replica no longer holds: their lease lapsed, and a reaper (on any replica) ends them. */
  lost: BackgroundRef[];
}

/**
 * Who runs which background response, shared by every replica. The owner
 * holds a lease per response and renews it; a replica that dies stops
 * renewing, and any other replica claims the response once the lease lapses
 * (`claimExpired`) and ends it. Cancels travel through here too, so they
 * reach the owner wherever the request arrived.
 */
export interface BackgroundRegistry {
  /** This replica now runs the response; its lease runs for `leaseMs`. */
  register(ref: BackgroundRef, leaseMs: number): Promise<void>;
  /** Extends the leases of the responses this replica runs, and reports cancels and lost leases among them. */
  renew(owned: readonly BackgroundRef[], leaseMs: number): Promise<LeaseRenewal>;
  /** The response ended (or was handed to the reaper): forget it and any cancel request. */
  unregister(ref: BackgroundRef): Promise<void>;
  /** Asks the owner to cancel the response; the owner hears at once when it listens, at its next renewal otherwise. */
  requestCancel(ref: BackgroundRef): Promise<void>;
  /** Called with cancels as they are published (the fast path; renewals are the safety net). */
  onCancel(listener: (ref: BackgroundRef) => void): void;
  /**
   * Responses whose lease lapsed, each handed to exactly one caller (at most
   * `limit`), who unregisters it once it has ended it. A claim not followed
   * by that within `graceMs` (the claimer died, or never heard the answer)
   * lapses too, and the response is handed out again.
   */
  claimExpired(limit: number, graceMs: number): Promise<BackgroundRef[]>;
  close(): Promise<void>;
}
