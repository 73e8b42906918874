import { applyRateLimit, policyHeader } from '../rate-limit/rate-limit-headers';
import type { RateLimiter } from '../rate-limit/rate-limiter';
import type { Step } from '../pipeline';

/** Per-key budget, shared by every process when Redis is configured. Runs after authentication, before validation. */
export function rateLimitPerKey(limiter: RateLimiter): Step {
  const policy = policyHeader(limiter);
  return async function rateLimitPerKeyStep(req, res, next) {
    applyRateLimit(res, limiter, policy, await limiter.consume(req.ctx.keyId!));
    next();
  };
}
