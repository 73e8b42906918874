import type { ErrorCode } from '../../lib/api-error';
import type { Environment } from '../pipeline/pipeline';

export type CacheOutcome = 'hit' | 'miss' | 'coalesced' | 'bypass';
/** `key`: an account's per-minute budget (its keys'); `quota`: its monthly quota; `anonymous`: a client address's. */
export type RateLimitKind = 'key' | 'quota' | 'anonymous';
/** Error codes of requests refused before any route saw them (Node's parser, CONNECT, Expect, no Host). */
export const EARLY_REFUSAL_CODES = ['invalid_request', 'payload_too_large', 'request_timeout', 'headers_too_large'] as const satisfies readonly ErrorCode[];
export type EarlyRefusalCode = (typeof EARLY_REFUSAL_CODES)[number];
/** How an upstream call ended: an HTTP status class, or why there was no response. */
export type UpstreamOutcome = '2xx' | '3xx' | '4xx' | '5xx' | 'refused' | 'timeout' | 'circuit_open' | 'saturated';

/**
 * What the gateway's hot path reports. Methods are cheap (pre-bound label sets), so steps
 * call them inline; the Prometheus registry behind them belongs to one gateway instance.
 */
export interface GatewayMetrics {
  /** One per finished API response: route is the operationId or 'unmatched'. */
  requestFinished(environment: Environment, route: string, status: number, seconds: number): void;
  cacheLookup(environment: Environment, outcome: CacheOutcome): void;
  rateLimited(kind: RateLimitKind): void;
  upstreamFinished(environment: Environment, outcome: UpstreamOutcome, seconds: number): void;
  /** A request refused before routing: no environment or route is known for it. */
  refusedEarly(code: EarlyRefusalCode): void;
}
