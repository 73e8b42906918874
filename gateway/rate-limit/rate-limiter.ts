import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { createBudgetLeases } from './budget-leases';

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
 * rate-limiter-flexible keeps the count — `RateLimiterRedis` (with an in-memory insurance limiter)
 * when Redis is configured, `RateLimiterMemory` otherwise — and budget leases in front of it let a
 * busy key spend most of its requests in process memory (see budget-leases.ts).
 */
export function createRateLimiter(o: RateLimiterOptions): RateLimiter {
  const base = { points: o.quota, duration: o.windowSeconds, keyPrefix: o.keyPrefix };
  const counter: RateLimiterAbstract = o.redis
    ? new RateLimiterRedis({ ...base, storeClient: o.redis, insuranceLimiter: new RateLimiterMemory(base) })
    : new RateLimiterMemory(base);
  return {
    policy: { name: o.name, quota: o.quota, windowSeconds: o.windowSeconds },
    consume: createBudgetLeases({ counter, quota: o.quota, windowMs: o.windowSeconds * 1000 }),
  };
}
