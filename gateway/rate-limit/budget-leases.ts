import type { RateDecision } from './rate-limiter';

/** A lease never exceeds this fraction of what the shared counter had left: 1/64. */
const SHARE_OF_REMAINING = 64;
const MAX_LEASE = 1024;
/** A lease spent within this doubles the next one; a slower one halves it. */
const FAST_LEASE_MS = 50;
/** Leases this large (a key that kept spending them fast) are renewed ahead, at half spent. */
const RENEW_AHEAD_FROM = 16;
const ignore = () => {};

/** The count a counter keeps for a key in its current window, after tokens were taken. */
export interface CounterCount {
  /** Tokens taken in the window so far, by every process, these included (it may pass the limit). */
  consumed: number;
  /** Epoch ms when the window ends. */
  resetAt: number;
}

/**
 * What leases are taken from: a count per key and window (Redis for every process, or memory).
 * It only counts; the limit is the leases' to apply, so one counter serves every plan's limit.
 */
export interface LeaseCounter {
  take(key: string, tokens: number): Promise<CounterCount>;
}

interface Lease {
  /** Tokens taken from the counter and not spent yet. */
  left: number;
  /** The counter's count when the lease was taken (later use by other processes is not seen). */
  counted: number;
  /** The limit the lease was taken under: its refusal holds only while the limit stays the same. */
  quota: number;
  /** The counter refused tokens: once `left` is spent, requests are refused until `resetAt` (or the limit changes). */
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
  /** The shared (or in-memory) counter; it is asked for several tokens at a time. */
  counter: LeaseCounter;
  /** The window's length (the shortest, for calendar months): tokens are carried over only within one window. */
  windowMs: number;
  /** Epoch ms; Date.now unless a test sets the pace (lease sizes follow how fast leases are spent). */
  clock?: () => number;
}

export interface BudgetLeases {
  /**
   * Spends one of the key's tokens under its limit `quota`: at once while its lease lasts (the hot
   * path), a promise when tokens must be taken from the counter. A changed limit applies from the
   * next tokens taken; tokens already leased under the old one are spent first. `now` is the
   * leases' clock as the caller has just read it (one reading serves a request's several uses).
   */
  consume(key: string, quota: number, now?: number): RateDecision | Promise<RateDecision>;
  /** The refusal the key's lease holds in memory under `quota` (its window spent), if any; spends nothing. */
  refusal(key: string, quota: number, now?: number): RateDecision | undefined;
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
 *   budget costs no round trip either. A changed limit (the account's plan) ends the refusal and
 *   sizes the next lease; tokens already leased under the old limit are spent first, nothing more.
 *   A refused take still counts its tokens: one lease per process and window, past the limit.
 * - A busy key's next tokens are taken when its lease is half spent, as the cache's generation
 *   lease is renewed at half-time: its requests never wait for the counter. Waiting cost a turn
 *   of the event loop to every request that found the lease empty, tens of times a second under
 *   load, in the slowest percent of the gateway's latencies. The cost is half a lease more held
 *   unspent at the end of a window.
 */
export function createBudgetLeases({ counter, windowMs, clock = Date.now }: BudgetLeasesOptions): BudgetLeases {
  const leases = new Map<string, Lease>();
  let sweptAt = clock();

  /** What the key may still spend under `quota`: what the counter had left at the lease, plus the lease's own tokens. */
  const remainingOf = (lease: Lease, quota: number) => Math.max(0, quota - lease.counted) + lease.left;

  /** The decision the key's lease can make now, without the counter; undefined when it cannot. */
  function spendLocally(key: string, lease: Lease | undefined, quota: number, now: number): RateDecision | undefined {
    if (!lease || now >= lease.resetAt) return undefined;
    if (lease.left > 0) {
      lease.left--;
      if (lease.size >= RENEW_AHEAD_FROM && lease.left <= lease.size >> 1 && !lease.pending && !lease.exhausted) {
        takeLease(key, lease, quota, now, false).catch(ignore); // a request that finds no tokens asks again, and meets the failure
      }
      return { allowed: true, remaining: remainingOf(lease, quota), resetSeconds: secondsUntil(lease.resetAt, now) };
    }
    if (lease.pending) return undefined;
    return heldRefusal(lease, quota, now);
  }

  /** The refusal a spent lease holds: only in its window, and only under the limit it was refused by. */
  function heldRefusal(lease: Lease, quota: number, now: number): RateDecision | undefined {
    return lease.exhausted && lease.quota === quota ? { allowed: false, remaining: 0, resetSeconds: secondsUntil(lease.resetAt, now) } : undefined;
  }

  function nextSize(previous: Lease | undefined, quota: number, now: number): number {
    let size = 1;
    if (previous) size = now - previous.takenAt < FAST_LEASE_MS ? previous.size * 2 : previous.size >> 1;
    const remaining = previous && now < previous.resetAt ? Math.max(0, quota - previous.counted) : quota;
    return Math.max(1, Math.min(size, MAX_LEASE, Math.floor(remaining / SHARE_OF_REMAINING)));
  }

  /**
   * Takes tokens from the counter: for a request that found none (its first token decides it, the
   * rest wait in memory), or ahead for a busy key (`forRequest` false), added to those it still has.
   */
  function takeLease(key: string, previous: Lease | undefined, quota: number, now: number, forRequest = true): Promise<RateDecision> {
    sweep(now);
    const size = nextSize(previous, quota, now);
    const lease: Lease = previous ?? { left: 0, counted: 0, quota, exhausted: false, resetAt: 0, size, takenAt: now };
    leases.set(key, lease);
    const granted = (count: CounterCount): RateDecision => {
      const refused = count.consumed > quota;
      // A refusal still reports the count including this request's tokens: those under the quota are ours.
      const tokens = refused ? Math.min(size, Math.max(0, quota - (count.consumed - size))) : size;
      const at = clock();
      const resetAt = Math.max(at + 1, count.resetAt);
      // Unspent tokens stay only while their window lasts and the new ones are of the same window.
      const held = at < lease.resetAt && resetAt < lease.resetAt + windowMs / 2 ? lease.left : 0;
      const allowed = held + tokens > 0;
      lease.left = held + tokens - (forRequest && allowed ? 1 : 0);
      lease.counted = count.consumed;
      lease.quota = quota;
      lease.exhausted = refused;
      lease.resetAt = resetAt;
      lease.size = size;
      lease.takenAt = now;
      lease.pending = undefined;
      return { allowed, remaining: remainingOf(lease, quota), resetSeconds: secondsUntil(lease.resetAt, at) };
    };
    const pending = counter.take(key, size).then(granted, (err: unknown) => {
      lease.pending = undefined;
      throw err;
    });
    lease.pending = pending;
    return pending;
  }

  async function consumeWithCounter(key: string, quota: number): Promise<RateDecision> {
    for (;;) {
      const lease = leases.get(key);
      if (!lease?.pending) return takeLease(key, lease, quota, clock());
      await lease.pending.catch(ignore); // its taker reports a failure; this request asks again
      const decision = spendLocally(key, leases.get(key), quota, clock());
      if (decision) return decision;
    }
  }

  /** Drops leases of windows that have ended, once per window. */
  function sweep(now: number): void {
    if (now - sweptAt < windowMs) return;
    sweptAt = now;
    for (const [key, lease] of leases) if (!lease.pending && now >= lease.resetAt) leases.delete(key);
  }

  return {
    consume(key, quota, now = clock()) {
      return spendLocally(key, leases.get(key), quota, now) ?? consumeWithCounter(key, quota);
    },
    refusal(key, quota, now) {
      const lease = leases.get(key);
      if (!lease?.exhausted || lease.left > 0 || lease.pending) return undefined;
      const at = now ?? clock();
      return at < lease.resetAt ? heldRefusal(lease, quota, at) : undefined;
    },
  };
}

function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}
