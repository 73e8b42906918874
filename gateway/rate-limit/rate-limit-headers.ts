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

/** `"month";r=0;t=30`: without String(n) of numbers that change per request (decimal-text.ts says why). */
export function fieldOf(policy: string, decision: RateDecision): string {
  return `"${policy}";r=${decimalText(decision.remaining)};t=${decimalText(decision.resetSeconds)}`;
}

/** The 429 of a spent window, with Retry-After: the anonymous budget's and a plan's per-minute budget's alike. */
export function rateLimited(quota: number, windowSeconds: number, decision: RateDecision): ApiError {
  return new ApiError('rate_limited', `Rate limit of ${quota} requests per ${windowSeconds} seconds exceeded; retry in ${decision.resetSeconds} s.`, {
    headers: { 'Retry-After': String(decision.resetSeconds) },
  });
}

export function applyRateLimit(headers: ResponseHeaders, limiter: RateLimiter, policy: string, decision: RateDecision): void {
  const { name, quota, windowSeconds } = limiter.policy;
  headers.set('RateLimit-Policy', policy);
  headers.set('RateLimit', fieldOf(name, decision));
  if (!decision.allowed) throw rateLimited(quota, windowSeconds, decision);
}
