import type { Logger } from '../../lib/logger';

export type CircuitState = 'closed' | 'open' | 'half_open';

/** One admitted upstream call. Exactly one of its methods counts; later calls are ignored. */
export interface CircuitPermit {
  succeeded(): void;
  failed(): void;
  /** Neither: the client left before the upstream could be judged. Frees a half-open probe slot. */
  abandoned(): void;
}

export type CircuitAdmission = { admitted: true; permit: CircuitPermit } | { admitted: false; retryAfterSeconds: number };

export interface CircuitBreaker {
  readonly state: CircuitState;
  admit(): CircuitAdmission;
}

export interface CircuitBreakerOptions {
  /** Named in the log lines: the breaker guards this environment's upstream. */
  environment: string;
  /** Consecutive failures that open the circuit. */
  failureThreshold: number;
  /** How long an open circuit refuses calls before letting one probe through. */
  openMs: number;
  logger: Logger;
  /** Milliseconds; injectable so tests move time instead of sleeping. */
  now?: () => number;
}

type Outcome = 'success' | 'failure' | 'abandoned';

/** A class, not three closures: a permit is made for every upstream call. */
class Permit implements CircuitPermit {
  private settled = false;

  constructor(
    private readonly settle: (admittedIn: number, outcome: Outcome) => void,
    private readonly admittedIn: number,
  ) {}

  succeeded(): void {
    this.end('success');
  }

  failed(): void {
    this.end('failure');
  }

  abandoned(): void {
    this.end('abandoned');
  }

  private end(outcome: Outcome): void {
    if (this.settled) return;
    this.settled = true;
    this.settle(this.admittedIn, outcome);
  }
}

/**
 * Closed → open after `failureThreshold` consecutive failures; open refuses every call for
 * `openMs`; then half-open lets exactly one probe through: its success closes the circuit,
 * its failure opens it again. A dead upstream then costs one call per `openMs` instead of
 * one connection attempt (or one timeout) per client request.
 */
export function createCircuitBreaker(o: CircuitBreakerOptions): CircuitBreaker {
  const now = o.now ?? Date.now;
  let state: CircuitState = 'closed';
  // Bumped on every transition: outcomes of calls admitted under an earlier state are stale.
  let epoch = 0;
  let failures = 0;
  let openedAt = 0;
  let outageStartedAt = 0;
  let probeInFlight = false;

  const moveTo = (next: CircuitState) => {
    state = next;
    epoch++;
  };

  const open = () => {
    const from = state;
    moveTo('open');
    openedAt = now();
    if (from === 'closed') {
      outageStartedAt = openedAt;
      o.logger.warn(
        { environment: o.environment, consecutiveFailures: failures, openMs: o.openMs },
        `upstream circuit opened for ${o.environment}; refusing requests for ${o.openMs} ms at a time until a probe succeeds`,
      );
    } else {
      o.logger.debug({ environment: o.environment }, 'upstream probe failed; circuit open again');
    }
  };

  const close = () => {
    moveTo('closed');
    failures = 0;
    o.logger.info({ environment: o.environment, downMs: now() - outageStartedAt }, `upstream circuit closed for ${o.environment}; the upstream answers again`);
  };

  const settle = (admittedIn: number, outcome: Outcome) => {
    if (admittedIn !== epoch) return;
    if (state === 'closed') {
      if (outcome === 'success') failures = 0;
      else if (outcome === 'failure' && ++failures >= o.failureThreshold) open();
      return;
    }
    // Half-open, and this is the probe (the only call admitted in this epoch still unsettled).
    probeInFlight = false;
    if (outcome === 'success') close();
    else if (outcome === 'failure') open();
  };

  const refuse = (waitMs: number): CircuitAdmission => ({ admitted: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) });

  return {
    get state() {
      return state === 'open' && now() - openedAt >= o.openMs ? 'half_open' : state;
    },
    admit() {
      if (state === 'open') {
        const waitMs = openedAt + o.openMs - now();
        if (waitMs > 0) return refuse(waitMs);
        moveTo('half_open');
        probeInFlight = false;
      }
      if (state === 'half_open') {
        // The probe ends within the upstream timeout; a second caller should come back after about that.
        if (probeInFlight) return refuse(0);
        probeInFlight = true;
      }
      return { admitted: true, permit: new Permit(settle, epoch) };
    },
  };
}
