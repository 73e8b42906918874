/**
 * Each environment's cache generation, read from Redis and trusted for a short lease, so that a
 * cache hit usually needs no round trip at all.
 *
 * Why a lease keeps read-your-writes across processes: a read sent at t0 sees every create whose
 * counter increment Redis ran before it. A create whose increment Redis ran later is acknowledged
 * to its client only `leaseMs` after that increment was answered (`waitOutLeases`, called by the
 * cache's invalidate), so after t0 + leaseMs. A request looked up before t0 + leaseMs therefore
 * cannot come from a client that already saw such a create's 201, and the generation read at t0
 * answers it truly. Only the clocks' rates must agree (monotonic time over milliseconds), not
 * their readings, so this holds across machines too.
 *
 * A lease runs from when its read was *sent*, not answered. Once half of it has gone, one read is
 * sent again, so under steady traffic the next lease is in before this one ends. After a lease has
 * ended, the requests of a turn share one read sent at the turn's end, after they all arrived.
 */
export interface GenerationLeases {
  /** The generation every create acknowledged before now belongs to: at once while a lease holds, else a promise. */
  current(environment: string): number | Promise<number>;
  /** Takes in a generation learnt by another read (an entry's), sent at `sentAt` (`now()`'s clock). */
  observe(environment: string, generation: number, sentAt: number): void;
}

export interface GenerationLeaseOptions {
  /** Asks Redis now; the lease is measured from the call. */
  read: (environment: string) => Promise<number>;
  leaseMs: number;
  /** Runs a task at the end of the turn; the gateway sends reads before the turn's writes (turn-end.ts). */
  atTurnEnd?: (task: () => void) => void;
  now?: () => number;
}

interface Lease {
  generation: number;
  /** End of the newest answered read's lease; -Infinity before the first. */
  validUntil: number;
  /** The newest read sent and not yet answered, and the end of its lease. */
  inFlight?: Promise<number>;
  inFlightUntil: number;
  /** A read waiting for the turn's end. */
  queued?: Promise<number>;
}

const ignore = () => {};

export function createGenerationLeases({ read, leaseMs, atTurnEnd = setImmediate, now = () => performance.now() }: GenerationLeaseOptions): GenerationLeases {
  if (!(leaseMs > 0)) throw new RangeError(`leaseMs must be positive, got ${leaseMs}`);
  const refreshAfterMs = leaseMs / 2;
  const leases = new Map<string, Lease>();

  const leaseOf = (environment: string) => {
    let lease = leases.get(environment);
    if (!lease) {
      lease = { generation: 0, validUntil: -Infinity, inFlightUntil: -Infinity };
      leases.set(environment, lease);
    }
    return lease;
  };

  const take = (lease: Lease, generation: number, sentAt: number) => {
    if (sentAt + leaseMs <= lease.validUntil) return; // an older read answering late
    lease.generation = generation;
    lease.validUntil = sentAt + leaseMs;
  };

  const queueRead = (lease: Lease, environment: string): Promise<number> => {
    let resolve!: (generation: number) => void;
    let reject!: (err: unknown) => void;
    const promise = new Promise<number>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    // A refresh nobody waits for must not fail as an unhandled rejection; waiters still see the failure.
    promise.catch(ignore);
    lease.queued = promise;
    atTurnEnd(() => {
      const sentAt = now();
      lease.queued = undefined;
      lease.inFlight = promise;
      lease.inFlightUntil = sentAt + leaseMs;
      const settled = () => {
        if (lease.inFlight === promise) lease.inFlight = undefined;
      };
      read(environment).then(
        (generation) => {
          take(lease, generation, sentAt);
          settled();
          resolve(generation);
        },
        (err: unknown) => {
          settled();
          reject(err);
        },
      );
    });
    return promise;
  };

  return {
    current(environment) {
      const lease = leaseOf(environment);
      const t = now();
      if (t < lease.validUntil) {
        if (t >= lease.validUntil - refreshAfterMs && !lease.inFlight && !lease.queued) queueRead(lease, environment);
        return lease.generation;
      }
      // A read sent less than a lease ago answers this request too (see above).
      if (lease.inFlight && t < lease.inFlightUntil) return lease.inFlight;
      return lease.queued ?? queueRead(lease, environment);
    },
    observe(environment, generation, sentAt) {
      take(leaseOf(environment), generation, sentAt);
    },
  };
}

/**
 * The creating side of the lease: resolves once `leaseMs` have passed since the increment was
 * answered, by the monotonic clock. Not a single timer: a timer's start is the event loop's cached
 * time, which can lag the real time by a whole turn.
 */
export async function waitOutLeases(leaseMs: number): Promise<void> {
  const until = performance.now() + leaseMs;
  for (let left = leaseMs; left > 0; left = until - performance.now()) {
    await new Promise((resolve) => setTimeout(resolve, Math.ceil(left)));
  }
}
