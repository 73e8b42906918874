import { createServer, type IncomingMessage } from 'node:http';
import type { Registry } from 'prom-client';
import { ApiError } from '../../lib/api-error';
import { renderError } from '../../lib/render-error';
import type { ErrorReporter } from '../../lib/report-error';
import { createDirectRoutes } from '../http/direct-routes';
import { passOnOtherExpectations } from '../http/expect-continue';
import { listenAt } from '../http/listen-address';
import { writeMetrics } from './write-metrics';

export interface MetricsServer {
  /** e.g. http://127.0.0.1:9464/metrics */
  url: string;
  close(): Promise<void>;
}

export interface MetricsServerOptions {
  registry: Registry;
  host: string;
  port: number;
  /** Tells a failed scrape, as the main port does. */
  report: ErrorReporter<IncomingMessage>;
}

/**
 * A plain listener with nothing but `GET /metrics` and no authentication: it belongs on an
 * address only the scraper reaches (METRICS_HOST, loopback by default), away from API traffic.
 */
export async function startMetricsServer({ registry, host, port, report }: MetricsServerOptions): Promise<MetricsServer> {
  const routes = createDirectRoutes({ '/metrics': (_req, res) => writeMetrics(res, registry) }, report);
  const server = createServer(function metricsListener(req, res) {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const route = routes.find(path);
    if (route) route(req, res);
    else renderError(res, new ApiError('not_found', `Nothing at ${req.method} ${path}.`));
  });
  // An unmet Expect gets the route's Error body, not Node's bare 417.
  passOnOtherExpectations(server);
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
