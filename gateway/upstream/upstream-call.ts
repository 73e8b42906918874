import type { ClientRequest, ServerResponse } from 'node:http';
import type { GatewayRequest } from '../pipeline/pipeline';
import type { CircuitPermit } from './circuit-breaker';

/**
 * One upstream call's state, kept in the request's context: the hand-off time (the timeout and
 * the duration count from it), the breaker's permit, and whether its outcome was reported.
 */
export interface UpstreamCall {
  readonly req: GatewayRequest;
  readonly res: ServerResponse;
  readonly permit: CircuitPermit;
  /** `performance.now()` at the hand-off: a number, where a BigInt clock allocated twice per call. */
  readonly startedAt: number;
  /** Set when http-proxy creates the upstream request, a moment after the hand-off. */
  upstream: ClientRequest | undefined;
  timer: NodeJS.Timeout | undefined;
  /** The outcome was reported (breaker and metrics); nothing from this call is reported again. */
  reported: boolean;
}
