import type { Environment } from '../pipeline';

export type CacheOutcome = 'hit' | 'miss' | 'coalesced' | 'bypass';
export type RateLimitKind = 'key' | 'anonymous';
/** How an upstream call ended: an HTTP status class, or why there was no response. */
export type UpstreamOutcome = '2xx' | '3xx' | '4xx' | '5xx' | 'refused' | 'timeout' | 'circuit_open';

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
}
