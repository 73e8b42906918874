import { Router } from 'express';
import { ApiError } from '../../lib/api-error';
import { renderError } from '../../lib/render-error';

export type HealthCheck = () => Promise<void>;

/** `/healthz`: the process answers. `/readyz`: every dependency answers within a bound. */
export function healthRoutes(checks: Record<string, HealthCheck>, timeoutMs = 2000): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const results = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          await withTimeout(check(), timeoutMs);
          return [name, 'ok'] as const;
        } catch {
          return [name, 'unavailable'] as const;
        }
      }),
    );
    const failing = results.filter(([, state]) => state !== 'ok').map(([name]) => name);
    if (failing.length) {
      renderError(res, new ApiError('service_unavailable', `Not ready: ${failing.join(', ')} unavailable.`, { headers: { 'Retry-After': '1' } }));
      return;
    }
    res.setHeader('Cache-Control', 'no-store');
    res.json({ status: 'ready', checks: Object.fromEntries(results) });
  });
  return router;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), ms);
    }),
  ]);
}
