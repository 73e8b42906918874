import { createHash, timingSafeEqual } from 'node:crypto';
import { Router } from 'express';
import type { Registry } from 'prom-client';
import { ApiError } from '../../lib/api-error';
import { renderError } from '../../lib/render-error';
import { writeMetrics } from './write-metrics';

const BEARER = /^bearer[ \t]+([^\s]+)[ \t]*$/i;

/** `GET /metrics` on the main port, for scrapers that hold METRICS_TOKEN. */
export function metricsRoutes({ registry, token }: { registry: Registry; token: string }): Router {
  const expected = digest(token);
  const router = Router();
  router.get('/metrics', async (req, res) => {
    const presented = BEARER.exec(req.headers.authorization ?? '')?.[1];
    // Digests have one length, so the comparison's time says nothing about the token's length or prefix.
    if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
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

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
