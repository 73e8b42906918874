import { applyRateLimit, policyHeader } from '../rate-limit/rate-limit-headers';
import type { RateDecision, RateLimiter } from '../rate-limit/rate-limiter';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import { whenReady, type GatewayRequest, type Next, type Step } from '../pipeline/pipeline';

/** Per-key budget, shared by every process when Redis is configured. Runs after authentication, before validation. */
export function rateLimitPerKey(limiter: RateLimiter, metrics: GatewayMetrics): Step {
  const policy = policyHeader(limiter);
  const decide = (req: GatewayRequest, next: Next, decision: RateDecision) => {
    if (!decision.allowed) metrics.rateLimited('key');
    applyRateLimit(req.ctx.headers, limiter, policy, decision);
    next();
  };
  return function rateLimitPerKeyStep(req, _res, next) {
    return whenReady(limiter.consume(req.ctx.keyId!), req, next, decide);
  };
}
