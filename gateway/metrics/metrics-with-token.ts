import { timingSafeEqual } from 'node:crypto';
import type { Registry } from 'prom-client';
import { ApiError } from '../../lib/api-error';
import { bearerToken, secretDigest } from '../../lib/bearer-token';
import type { DirectHandler } from '../http/direct-routes';
import { writeMetrics } from './write-metrics';

/** `GET /metrics` on the main port, for scrapers that hold METRICS_TOKEN. */
export function metricsWithToken({ registry, token }: { registry: Registry; token: string }): DirectHandler {
  const expected = secretDigest(token);
  return async function metricsWithToken(req, res) {
    const presented = bearerToken(req.headers.authorization);
    if (presented === undefined || !timingSafeEqual(secretDigest(presented), expected)) {
      throw new ApiError('unauthorized', 'Metrics require "Authorization: Bearer <METRICS_TOKEN>".', { headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' } });
    }
    await writeMetrics(res, registry);
  };
}
