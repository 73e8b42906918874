import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateDecision } from './rate-limiter';

/** A lease never exceeds this fraction of what the shared counter had left: 1/64. */
const SHARE_OF_REMAINING = 64;
const MAX_LEASE = 1024;
/** A lease spent within this doubles the next one; a slower one halves it. */
const FAST_LEASE_MS = 50;

interface Lease {
  /** Tokens taken from the counter and not spent yet. */
  left: number;
  /** What the counter had left when the lease was taken (later use by other processes is not seen). */
  counterRemaining: number;
  /** The counter refused tokens: once `left` is spent, requests are refused until `resetAt`. */
  exhausted: boolean;
  /** Epoch ms when the counter's window ends; the lease ends with it. */
  resetAt: number;
  /** Tokens asked for last time, and when: the next size follows how fast they were spent. */
  size: number;
  takenAt: number;
  /** A lease being taken: requests that find no tokens wait for it instead of asking again. */
  pending?: Promise<RateDecision>;
}

export interface BudgetLeasesOptions {
  /** The shared (or in-memory) fixed-window counter; it is asked for several tokens at a time. */
  counter: Pick<RateLimiterAbstract, 'consume'>;
  quota: number;
  windowMs: number;
}

/**
 * Budget leases: a process takes a key's tokens from the counter in blocks and spends them in
 * memory, so a busy key costs no counter round trip (no Redis command) on most requests.
 * - A lease starts at 1 token and doubles while leases are spent within FAST_LEASE_MS, up to
 *   MAX_LEASE and never more than 1/64 of what the counter had left: a key that sends slowly,
 *   or has little left, is counted request by request, exactly as without leases.
 * - Tokens are taken from the counter before they are spent, so all processes together never
 *   admit more than the quota. The cost is at the end of a window: tokens another process holds
 *   unspent (at most 1/64 of what was left when it took them) are refused to this one.
 * - `remaining` is what the counter had left when this process last took tokens plus its own
 *   unspent tokens: exact for one process, not counting other processes' use since.
 * - A refusal by the counter holds in memory until the window resets: a client hammering past its
 *   budget costs no round trip either.
 */
export function createBudgetLeases({ counter, quota, windowMs }: BudgetLeasesOptions): (key: string) => RateDecision | Promise<RateDecision> {
  const leases = new Map<string, Lease>();
  let sweptAt = Date.now();

  /** The decision the key's lease can make now, without the counter; undefined when it cannot. */
  function spendLocally(lease: Lease | undefined, now: number): RateDecision | undefined {
    if (!lease || lease.pending || now >= lease.resetAt) return undefined;
    if (lease.left > 0) {
      lease.left--;
      return { allowed: true, remaining: lease.counterRemaining + lease.left, resetSeconds: secondsUntil(lease.resetAt, now) };
    }
    return lease.exhausted ? { allowed: false, remaining: 0, resetSeconds: secondsUntil(lease.resetAt, now) } : undefined;
  }

  function nextSize(previous: Lease | undefined, now: number): number {
    let size = 1;
    if (previous) size = now - previous.takenAt < FAST_LEASE_MS ? previous.size * 2 : previous.size >> 1;
    const remaining = previous && now < previous.resetAt ? previous.counterRemaining : quota;
    return Math.max(1, Math.min(size, MAX_LEASE, Math.floor(remaining / SHARE_OF_REMAINING)));
  }

  /** Takes a lease for this request: its first token decides the request, the rest wait in memory. */
  function takeLease(key: string, previous: Lease | undefined, now: number): Promise<RateDecision> {
    sweep(now);
    const size = nextSize(previous, now);
    const lease: Lease = previous ?? { left: 0, counterRemaining: quota, exhausted: false, resetAt: 0, size, takenAt: now };
    leases.set(key, lease);
    const granted = (res: RateLimiterRes, refused: boolean): RateDecision => {
      // A refusal still reports the count including this request's tokens: those under the quota are ours.
      const tokens = refused ? Math.min(size, Math.max(0, quota - (res.consumedPoints - size))) : size;
      const at = Date.now();
      lease.left = Math.max(0, tokens - 1);
      lease.counterRemaining = refused ? 0 : res.remainingPoints;
      lease.exhausted = refused;
      lease.resetAt = at + Math.max(1, res.msBeforeNext);
      lease.size = size;
      lease.takenAt = now;
      lease.pending = undefined;
      return { allowed: tokens > 0, remaining: lease.counterRemaining + lease.left, resetSeconds: secondsUntil(lease.resetAt, at) };
    };
    const pending = counter.consume(key, size).then(
      (res) => granted(res, false),
      (rejection: unknown) => {
        if (rejection instanceof RateLimiterRes) return granted(rejection, true);
        lease.pending = undefined;
        throw rejection;
      },
    );
    lease.pending = pending;
    return pending;
  }

  async function consumeWithCounter(key: string): Promise<RateDecision> {
    for (;;) {
      const lease = leases.get(key);
      if (!lease?.pending) return takeLease(key, lease, Date.now());
      await lease.pending.catch(() => {}); // its taker reports a failure; this request asks again
      const decision = spendLocally(leases.get(key), Date.now());
      if (decision) return decision;
    }
  }

  /** Drops leases of windows that have ended, once per window. */
  function sweep(now: number): void {
    if (now - sweptAt < windowMs) return;
    sweptAt = now;
    for (const [key, lease] of leases) if (!lease.pending && now >= lease.resetAt) leases.delete(key);
  }

  return function consume(key: string): RateDecision | Promise<RateDecision> {
    return spendLocally(leases.get(key), Date.now()) ?? consumeWithCounter(key);
  };
}

function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}
