import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

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
  consume(key: string): Promise<RateDecision>;
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
 * rate-limiter-flexible behind our small interface: `RateLimiterRedis` (with an in-memory
 * insurance limiter) when Redis is configured, `RateLimiterMemory` otherwise.
 */
export function createRateLimiter(o: RateLimiterOptions): RateLimiter {
  const base = { points: o.quota, duration: o.windowSeconds, keyPrefix: o.keyPrefix };
  const limiter: RateLimiterAbstract = o.redis
    ? new RateLimiterRedis({ ...base, storeClient: o.redis, insuranceLimiter: new RateLimiterMemory(base) })
    : new RateLimiterMemory(base);
  const decide = (res: RateLimiterRes, allowed: boolean): RateDecision => ({
    allowed,
    remaining: Math.max(0, res.remainingPoints),
    resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
  });
  return {
    policy: { name: o.name, quota: o.quota, windowSeconds: o.windowSeconds },
    async consume(key) {
      try {
        return decide(await limiter.consume(key), true);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return decide(rejection, false);
        throw rejection;
      }
    },
  };
}
