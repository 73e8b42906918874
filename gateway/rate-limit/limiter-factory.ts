import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import type { CreateLimiter } from '../../identity/limit-refusal';

/**
 * Counters for the portal's sign-in and sign-up limits, built as the API limiter's are: with Redis,
 * one count for every process that survives their restarts, and an in-memory insurance limiter
 * that keeps counting while Redis is away; memory alone without Redis.
 */
export function createLimiterFactory({ redis, keyPrefix }: { redis?: Redis; keyPrefix: string }): CreateLimiter {
  return function createLimiter(options) {
    const base = { ...options, keyPrefix: `${keyPrefix}${options.keyPrefix}` };
    return redis ? new RateLimiterRedis({ ...base, storeClient: redis, insuranceLimiter: new RateLimiterMemory(base) }) : new RateLimiterMemory(base);
  };
}
