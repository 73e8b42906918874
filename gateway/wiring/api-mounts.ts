import type { IncomingMessage } from 'node:http';
import { ENVIRONMENTS, type EnvironmentPrefixes } from '../../openapi/environments';
import type { OperationTable } from '../../openapi/operations';
import { createMemoryListCache } from '../cache/memory-list-cache';
import { createRedisListCache } from '../cache/redis-list-cache';
import { clientIp, clientKey } from '../http/client-ip';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import { createTurnEnd } from '../pipeline/turn-end';
import { originOf } from '../steps/cors';
import { createCircuitBreaker } from '../upstream/circuit-breaker';
import { createApiPipeline } from './api';
import type { Wiring } from './context';
import type { Identity } from './identity';
import type { RequestLog } from './request-log';
import type { Stores } from './stores';

export interface ApiMountsDeps {
  stores: Stores;
  identity: Identity;
  operations: OperationTable;
  /** Each environment's path prefix, from the document's servers. */
  prefixes: EnvironmentPrefixes;
  metrics: GatewayMetrics;
  /** Where clients reach the gateway (PUBLIC_URL, else http://localhost:<port>). */
  publicUrl: string;
  /** The gateway's own address, as the ready line shows it. */
  ownUrl: string;
  requestLog: RequestLog;
  /** The server's requests in progress: a response alone in flight is written at once (turn-end-writer.ts). */
  requestsInFlight: () => number;
}

/** Both environments' API pipelines, sharing one list cache, the accounts' monthly quotas and one turn end. */
export function createApiMounts(w: Wiring, { stores, identity, operations, prefixes, metrics, publicUrl, ownUrl, requestLog, requestsInFlight }: ApiMountsDeps) {
  const { config, logger, defer } = w;
  // Browser pages from PUBLIC_URL or from the gateway's own address may call the API (CORS).
  const corsOrigins = [...new Set([publicUrl, ownUrl].map(originOf).filter((o): o is string => o !== null))];
  // One turn end for the process: the turn's cache reads leave before its responses are written.
  const turnEnd = createTurnEnd();
  const cache = createListCache(w, stores.redis?.publisher, turnEnd.beforeWrites);
  const clientIpOf = (req: IncomingMessage) => clientIp(req, config.trustProxy);
  const clientKeyOf = (req: IncomingMessage) => clientKey(req, config.trustProxy);
  return ENVIRONMENTS.map((environment) => {
    const mount = createApiPipeline({
      environment,
      prefixes,
      upstreamUrl: stores.upstreams.urls[environment],
      upstreamToken: stores.upstreams.tokens[environment],
      publicUrl,
      upstreamTimeoutMs: config.upstreamTimeoutMs,
      upstreamMaxSockets: config.upstreamMaxSockets,
      upstreamMaxQueue: config.upstreamMaxQueue,
      trustProxy: config.trustProxy,
      circuitBreaker: createCircuitBreaker({ environment, failureThreshold: config.circuitFailureThreshold, openMs: config.circuitOpenMs, logger }),
      operations,
      keys: identity.verifier,
      usage: identity.apiKeys,
      dailyUsage: identity.dailyUsage,
      accountLimits: {
        plans: identity.plans,
        minute: identity.limiters.minute[environment],
        month: identity.limiters.month,
        usage: identity.accountUsage,
      },
      anonymousLimiter: identity.limiters.anonymous,
      clientIp: clientIpOf,
      clientKey: clientKeyOf,
      cache,
      corsOrigins,
      logger,
      clockMs: identity.clockMs,
      metrics,
      requestLog: requestLog.writer,
      turnEnd,
      requestsInFlight,
    });
    defer(() => mount.close());
    return mount;
  });
}

/** Shared through Redis when there is one, else this process's own; none when CACHE_TTL_SECONDS=0. */
function createListCache({ config }: Wiring, redis: NonNullable<Stores['redis']>['publisher'] | undefined, atTurnEnd: (task: () => void) => void) {
  if (config.cacheTtlSeconds === 0) return undefined;
  if (!redis) return createMemoryListCache({ ttlSeconds: config.cacheTtlSeconds, maxBytes: config.cacheMaxBytes });
  return createRedisListCache({ redis, prefix: config.redisKeyPrefix, ttlSeconds: config.cacheTtlSeconds, atTurnEnd, localCopyBytes: config.cacheMaxBytes });
}
