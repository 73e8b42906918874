import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { ApiError } from '../../lib/api-error';
import { renderError } from '../../lib/render-error';
import { listenAt } from '../http/listen-address';
import { writeMetrics } from './write-metrics';

export interface MetricsServer {
  /** e.g. http://127.0.0.1:9464/metrics */
  url: string;
  close(): Promise<void>;
}

/**
 * A plain listener with nothing but `GET /metrics` and no authentication: it belongs on an
 * address only the scraper reaches (METRICS_HOST, loopback by default), away from API traffic.
 */
export async function startMetricsServer({ registry, host, port }: { registry: Registry; host: string; port: number }): Promise<MetricsServer> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path !== '/metrics') return void renderError(res, new ApiError('not_found', `Nothing at ${req.method} ${path}.`));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return void renderError(res, new ApiError('method_not_allowed', `${req.method} is not allowed on /metrics.`, { headers: { Allow: 'GET, HEAD' } }));
    }
    writeMetrics(res, registry).catch((err: unknown) => renderError(res, err));
  });
  const { url } = await listenAt(server, host, port);
  return {
    url: `${url}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        // Scrapers keep connections alive between scrapes; nothing here is worth waiting for.
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
