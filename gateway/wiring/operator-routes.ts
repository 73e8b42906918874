import type { Registry } from 'prom-client';
import { createDirectRoutes, directRouteReporter, type DirectHandler, type DirectRoutes } from '../http/direct-routes';
import { healthHandlers, type HealthCheck } from '../http/health';
import { metricsWithToken } from '../metrics/metrics-with-token';
import type { Wiring } from './context';
import type { Stores } from './stores';

/** The operator's paths on the main port, answered without Express: health always, `/metrics` with METRICS_TOKEN. */
export function createOperatorRoutes({ config, logger }: Wiring, { stores, registry }: { stores: Stores; registry: Registry }): DirectRoutes {
  const { db, redis } = stores;
  const checks: Record<string, HealthCheck> = { database: () => db.ping() };
  if (redis) checks.redis = async () => void (await redis.publisher.ping());
  const handlers: Record<string, DirectHandler> = healthHandlers(checks);
  if (config.metricsToken) handlers['/metrics'] = metricsWithToken({ registry, token: config.metricsToken });
  return createDirectRoutes(handlers, directRouteReporter(logger));
}
