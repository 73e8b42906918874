import { ApiError } from '../../lib/api-error';
import { renderError } from '../../lib/render-error';
import { sendJson, type DirectHandler } from './direct-routes';

export type HealthCheck = () => Promise<void>;

/** `/healthz`: the process answers. `/readyz`: every dependency answers within a bound. */
export function healthHandlers(checks: Record<string, HealthCheck>, timeoutMs = 2000): Record<'/healthz' | '/readyz', DirectHandler> {
  return {
    '/healthz': function healthz(_req, res) {
      sendJson(res, 200, { status: 'ok' });
    },
    '/readyz': async function readyz(_req, res) {
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
      // Rendered, not reported: the 503 is the probe's answer, not a failure, and a line per probe would flood the log.
      if (failing.length) {
        renderError(res, new ApiError('service_unavailable', `Not ready: ${failing.join(', ')} unavailable.`, { headers: { 'Retry-After': '1' } }));
        return;
      }
      sendJson(res, 200, { status: 'ready', checks: Object.fromEntries(results) });
    },
  };
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
