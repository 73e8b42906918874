import { ApiError } from '../../lib/api-error';
import type { ResponseHeaders } from '../http/response-headers';
import { decimalText } from './decimal-text';
import type { RateDecision, RateLimiter } from './rate-limiter';

/**
 * IETF draft-ietf-httpapi-ratelimit-headers-11 fields of a limiter with one policy (the anonymous
 * budget; an account's plan has its own, plan-policies.ts):
 *   RateLimit-Policy: "anonymous";q=60;w=60
 *   RateLimit: "anonymous";r=58;t=42
 */
export function policyHeader(limiter: RateLimiter): string {
  const { name, quota, windowSeconds } = limiter.policy;
  return `"${name}";q=${quota};w=${windowSeconds}`;
}

export function applyRateLimit(headers: ResponseHeaders, limiter: RateLimiter, policy: string, decision: RateDecision): void {
  headers.set('RateLimit-Policy', policy);
  headers.set('RateLimit', `"${limiter.policy.name}";r=${decimalText(decision.remaining)};t=${decision.resetSeconds}`);
  if (!decision.allowed) {
    throw new ApiError('rate_limited', `Rate limit of ${limiter.policy.quota} requests per ${limiter.policy.windowSeconds} seconds exceeded; retry in ${decision.resetSeconds} s.`, {
      headers: { 'Retry-After': String(decision.resetSeconds) },
    });
  }
}
