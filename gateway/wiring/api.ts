import type { IncomingMessage } from 'node:http';
import type { Logger } from '../../lib/logger';
import { MAX_BODY_BYTES } from '../../lib/read-json-body';
import type { EnvironmentPrefixes } from '../../openapi/environments';
import type { OperationTable } from '../../openapi/operations';
import { composePipeline, type Environment } from '../pipeline/pipeline';
import type { ListCache } from '../cache/list-cache';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { RequestLogWriter } from '../request-log/request-log-writer';
import type { RateLimiter } from '../rate-limit/rate-limiter';
import type { CircuitBreaker } from '../upstream/circuit-breaker';
import { authenticate, type KeyChecker, type UsageRecorder } from '../steps/authenticate';
import { cors } from '../steps/cors';
import { listCache } from '../steps/list-cache';
import { deprecationHeaders } from '../steps/deprecation-headers';
import { logRequest, type OutcomeRecorder } from '../steps/log-request';
import { matchRoute } from '../steps/match-route';
import { proxyToUpstream } from '../steps/proxy';
import { rateLimitPerAccount, type AccountLimitsOptions } from '../steps/rate-limit';
import { refuseUnknownRoute } from '../steps/refuse-unknown-route';
import { validateRequest } from '../steps/validate-request';
import { createLinkRewriter } from '../upstream/upstream-links';
import { pipelineErrorHandler } from '../pipeline/error-handler';
import type { TurnEnd } from '../pipeline/turn-end';
import { createTurnEndWriter } from '../pipeline/turn-end-writer';

export interface ApiPipelineOptions {
  environment: Environment;
  /** Every environment's public prefix (the document's servers); this pipeline mounts its own. */
  prefixes: EnvironmentPrefixes;
  upstreamUrl: string;
  /** The upstream's own credential (an embedded store's token); undefined for a remote upstream. */
  upstreamToken?: string;
  publicUrl: string;
  upstreamTimeoutMs: number;
  upstreamMaxSockets: number;
  upstreamMaxQueue: number;
  /** Behind a trusted load balancer: its X-Forwarded-For chain is passed on, extended. */
  trustProxy: boolean;
  /** This environment's own: one upstream's outage never refuses the other environment's requests. */
  circuitBreaker: CircuitBreaker;
  operations: OperationTable;
  keys: KeyChecker;
  /** Counts each authenticated request per key, and its calls to deprecated operations. */
  usage: UsageRecorder;
  /** Counts each ended request of a key by UTC day and outcome (the portal's usage chart). */
  dailyUsage: OutcomeRecorder;
  /** The account's plan: its per-minute budget in this environment and its monthly quota (metrics are this pipeline's). */
  accountLimits: Omit<AccountLimitsOptions, 'metrics' | 'clock'>;
  /** Per client IP, for requests without a valid key. */
  anonymousLimiter: RateLimiter;
  clientIp: (req: IncomingMessage) => string;
  /** What the anonymous limiter counts a client by: its address, IPv6 by its /64. */
  clientKey: (req: IncomingMessage) => string;
  /** Undefined when CACHE_TTL_SECONDS=0: no cache step at all. */
  cache?: ListCache;
  /** Origins whose pages may call the API from a browser (CORS): PUBLIC_URL's and the gateway's own. */
  corsOrigins: readonly string[];
  logger: Logger;
  /** Epoch ms, the gateway's clock for the cache, the sunset and the quota: Date.now unless a test injects a clock (no Date per read). */
  clockMs: () => number;
  metrics: GatewayMetrics;
  /** Where each ended request with a key is recorded for its owner. */
  requestLog?: Pick<RequestLogWriter, 'record'>;
  /** The process's end of turn: the turn's Redis reads and upstream calls are handed over, then its responses written (turn-end.ts). */
  turnEnd: TurnEnd;
  /** The server's requests in progress (drain.ts): a response alone in flight is written at once. */
  requestsInFlight: () => number;
}

/**
 * The API path of one environment, as data: each step is one concern, in the order the
 * contract needs: 401 before 429 (the plan's per-minute budget, then its monthly quota) before
 * 400; deprecation headers on every response, 401s included; the cache only after every
 * refusal, so a cached body never skips one.
 */
export function createApiPipeline(o: ApiPipelineOptions) {
  const onError = pipelineErrorHandler(o.logger);
  const prefix = o.prefixes[o.environment];
  const send = createTurnEndWriter(onError, o.turnEnd.writes);
  // An upstream's answer alone in flight is written at once; a hit always waits for the turn's end
  // (turn-end-writer.ts: written at once, hits served a quarter fewer a second).
  const sendAnswer = createTurnEndWriter(onError, o.turnEnd.writes, o.requestsInFlight);
  const proxy = proxyToUpstream({
    upstreamUrl: o.upstreamUrl,
    upstreamToken: o.upstreamToken,
    timeoutMs: o.upstreamTimeoutMs,
    maxSockets: o.upstreamMaxSockets,
    maxQueue: o.upstreamMaxQueue,
    publicUrl: o.publicUrl,
    trustProxy: o.trustProxy,
    clientIp: o.clientIp,
    links: createLinkRewriter({ upstreamUrl: o.upstreamUrl, publicUrl: o.publicUrl, prefix }),
    breaker: o.circuitBreaker,
    metrics: o.metrics,
    onError,
    beforeWrites: o.turnEnd.beforeWrites,
    send: sendAnswer,
  });
  const cache = o.cache ? listCache({ cache: o.cache, logger: o.logger, metrics: o.metrics, now: o.clockMs, send }) : undefined;
  const run = composePipeline(
    [
      logRequest(o.logger, o.metrics, o.dailyUsage, o.requestLog),
      cors({ allowedOrigins: o.corsOrigins }),
      matchRoute(o.operations),
      deprecationHeaders({ noticeUrl: `${o.publicUrl}/portal/deprecations` }),
      authenticate({ keys: o.keys, anonymousLimiter: o.anonymousLimiter, clientKey: o.clientKey, metrics: o.metrics, usage: o.usage, prefixes: o.prefixes }),
      ...(cache ? [cache.prefetch] : []),
      rateLimitPerAccount({ ...o.accountLimits, clock: o.clockMs, metrics: o.metrics }),
      refuseUnknownRoute({ now: o.clockMs }),
      validateRequest({ maxBodyBytes: MAX_BODY_BYTES }),
      ...(cache ? [cache.serve] : []),
      proxy.step,
    ],
    onError,
  );
  return { prefix, environment: o.environment, run, close: proxy.close };
}
