import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateDecision } from './rate-limiter';

/** A lease never exceeds this fraction of what the shared counter had left: 1/64. */
const SHARE_OF_REMAINING = 64;
const MAX_LEASE = 1024;
/** A lease spent within this doubles the next one; a slower one halves it. */
const FAST_LEASE_MS = 50;
/** Leases this large (a key that kept spending them fast) are renewed ahead, at half spent. */
const RENEW_AHEAD_FROM = 16;
const ignore = () => {};

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
  /**
   * Tokens being taken: requests that find none left wait for them instead of asking again;
   * while a busy key's next tokens are taken ahead, its requests go on spending the last ones.
   */
  pending?: Promise<RateDecision>;
}

export interface BudgetLeasesOptions {
  /** The shared (or in-memory) fixed-window counter; it is asked for several tokens at a time. */
  counter: Pick<RateLimiterAbstract, 'consume'>;
  quota: number;
  windowMs: number;
  /** Epoch ms; Date.now unless a test sets the pace (lease sizes follow how fast leases are spent). */
  clock?: () => number;
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
 * - A busy key's next tokens are taken when its lease is half spent, as the cache's generation
 *   lease is renewed at half-time: its requests never wait for the counter. Waiting cost a turn
 *   of the event loop to every request that found the lease empty, tens of times a second under
 *   load, in the slowest percent of the gateway's latencies. The cost is half a lease more held
 *   unspent at the end of a window.
 */
export function createBudgetLeases({ counter, quota, windowMs, clock = Date.now }: BudgetLeasesOptions): (key: string) => RateDecision | Promise<RateDecision> {
  const leases = new Map<string, Lease>();
  let sweptAt = clock();

  /** The decision the key's lease can make now, without the counter; undefined when it cannot. */
  function spendLocally(key: string, lease: Lease | undefined, now: number): RateDecision | undefined {
    if (!lease || now >= lease.resetAt) return undefined;
    if (lease.left > 0) {
      lease.left--;
      if (lease.size >= RENEW_AHEAD_FROM && lease.left <= lease.size >> 1 && !lease.pending && !lease.exhausted) {
        takeLease(key, lease, now, false).catch(ignore); // a request that finds no tokens asks again, and meets the failure
      }
      return { allowed: true, remaining: lease.counterRemaining + lease.left, resetSeconds: secondsUntil(lease.resetAt, now) };
    }
    if (lease.pending) return undefined;
    return lease.exhausted ? { allowed: false, remaining: 0, resetSeconds: secondsUntil(lease.resetAt, now) } : undefined;
  }

  function nextSize(previous: Lease | undefined, now: number): number {
    let size = 1;
    if (previous) size = now - previous.takenAt < FAST_LEASE_MS ? previous.size * 2 : previous.size >> 1;
    const remaining = previous && now < previous.resetAt ? previous.counterRemaining : quota;
    return Math.max(1, Math.min(size, MAX_LEASE, Math.floor(remaining / SHARE_OF_REMAINING)));
  }

  /**
   * Takes tokens from the counter: for a request that found none (its first token decides it, the
   * rest wait in memory), or ahead for a busy key (`forRequest` false), added to those it still has.
   */
  function takeLease(key: string, previous: Lease | undefined, now: number, forRequest = true): Promise<RateDecision> {
    sweep(now);
    const size = nextSize(previous, now);
    const lease: Lease = previous ?? { left: 0, counterRemaining: quota, exhausted: false, resetAt: 0, size, takenAt: now };
    leases.set(key, lease);
    const granted = (res: RateLimiterRes, refused: boolean): RateDecision => {
      // A refusal still reports the count including this request's tokens: those under the quota are ours.
      const tokens = refused ? Math.min(size, Math.max(0, quota - (res.consumedPoints - size))) : size;
      const at = clock();
      const resetAt = at + Math.max(1, res.msBeforeNext);
      // Unspent tokens stay only while their window lasts and the new ones are of the same window.
      const held = at < lease.resetAt && resetAt < lease.resetAt + windowMs / 2 ? lease.left : 0;
      const allowed = held + tokens > 0;
      lease.left = held + tokens - (forRequest && allowed ? 1 : 0);
      lease.counterRemaining = refused ? 0 : res.remainingPoints;
      lease.exhausted = refused;
      lease.resetAt = resetAt;
      lease.size = size;
      lease.takenAt = now;
      lease.pending = undefined;
      return { allowed, remaining: lease.counterRemaining + lease.left, resetSeconds: secondsUntil(lease.resetAt, at) };
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
      if (!lease?.pending) return takeLease(key, lease, clock());
      await lease.pending.catch(ignore); // its taker reports a failure; this request asks again
      const decision = spendLocally(key, leases.get(key), clock());
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
    return spendLocally(key, leases.get(key), clock()) ?? consumeWithCounter(key);
  };
}

function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}
