import type Redis from 'ioredis';
import { createBudgetLeases } from './budget-leases';
import { createCounter, leaseCounter } from './limiter-factory';

/** What one request learns from its budget; `allowed: false` is a business outcome, not an error. */
export interface RateDecision {
  allowed: boolean;
  /** Requests left in the current window (0 when refused). */
  remaining: number;
  /** Seconds until the window resets (≥ 1). */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Budget name and size, for the `RateLimit-Policy` header. */
  readonly policy: { name: string; quota: number; windowSeconds: number };
  /** At once while the key's lease lasts (the hot path); a promise when tokens must be taken from the counter. */
  consume(key: string): RateDecision | Promise<RateDecision>;
}

export interface RateLimiterOptions {
  name: string;
  quota: number;
  windowSeconds: number;
  keyPrefix: string;
  /** Shared budget across processes when given; the in-memory insurance limiter holds while Redis is away. */
  redis?: Redis;
}

/**
 * rate-limiter-flexible keeps the count (createCounter: Redis with an in-memory insurance limiter,
 * or memory alone), and budget leases in front of it let a
 * busy key spend most of its requests in process memory (see budget-leases.ts).
 */
export function createRateLimiter(o: RateLimiterOptions): RateLimiter {
  const counter = leaseCounter(createCounter({ points: o.quota, duration: o.windowSeconds, keyPrefix: o.keyPrefix }, o.redis));
  const leases = createBudgetLeases({ counter, windowMs: o.windowSeconds * 1000 });
  const { quota } = o;
  return {
    policy: { name: o.name, quota, windowSeconds: o.windowSeconds },
    consume: (key) => leases.consume(key, quota),
  };
}
