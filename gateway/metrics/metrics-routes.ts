import { timingSafeEqual } from 'node:crypto';
import { Router } from 'express';
import type { Registry } from 'prom-client';
import { ApiError } from '../../lib/api-error';
import { bearerToken, secretDigest } from '../../lib/bearer-token';
import { renderError } from '../../lib/render-error';
import { writeMetrics } from './write-metrics';

/** `GET /metrics` on the main port, for scrapers that hold METRICS_TOKEN. */
export function metricsRoutes({ registry, token }: { registry: Registry; token: string }): Router {
  const expected = secretDigest(token);
  const router = Router();
  router.get('/metrics', async (req, res) => {
    const presented = bearerToken(req.headers.authorization);
    if (presented === undefined || !timingSafeEqual(secretDigest(presented), expected)) {
      renderError(
        res,
        new ApiError('unauthorized', 'Metrics require "Authorization: Bearer <METRICS_TOKEN>".', { headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' } }),
      );
      return;
    }
    await writeMetrics(res, registry);
  });
  return router;
}
