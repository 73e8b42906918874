import { applyRateLimit, policyHeader } from '../rate-limit/rate-limit-headers';
import type { RateLimiter } from '../rate-limit/rate-limiter';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { Step } from '../pipeline';

/** Per-key budget, shared by every process when Redis is configured. Runs after authentication, before validation. */
export function rateLimitPerKey(limiter: RateLimiter, metrics: GatewayMetrics): Step {
  const policy = policyHeader(limiter);
  return async function rateLimitPerKeyStep(req, res, next) {
    const decision = await limiter.consume(req.ctx.keyId!);
    if (!decision.allowed) metrics.rateLimited('key');
    applyRateLimit(res, limiter, policy, decision);
    next();
  };
}
