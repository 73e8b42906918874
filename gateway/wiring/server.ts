import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';
import { limitConnections } from '../http/connection-limits';
import { trackForDrain, type HttpDrain } from '../http/drain';
import { directRouteReporter } from '../http/direct-routes';
import { continueWhenBodyIsRead, passOnOtherExpectations } from '../http/expect-continue';
import { answerMalformedRequests, type CountRefusal } from '../http/malformed-requests';
import { closeUnreadBodies } from '../http/unread-body';
import { startMetricsServer } from '../metrics/metrics-server';
import type { Wiring } from './context';
import { listenAt, type ListenAddress } from '../http/listen-address';

/** How long a body may keep arriving after its response (a refusal that did not read it) before the connection is cut. */
const UNREAD_BODY_GRACE_MS = 2000;

/**
 * The Node server with its caps and deadlines, not yet listening and without a request handler:
 * the bound port is known only after listen, and links need it when PUBLIC_URL is unset.
 */
export function createHttpServer({ config, logger }: Wiring, refusedEarly: CountRefusal): { server: Server; drainer: HttpDrain } {
  // Host is checked by the front handler, which answers a request without one with an Error body (malformed-requests.ts).
  const server = createServer({
    requireHostHeader: false,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    headersTimeout: config.headersTimeoutMs,
    // Node refuses a request deadline shorter than the headers' one: a request includes its headers.
    requestTimeout: Math.max(config.requestTimeoutMs, config.headersTimeoutMs),
    // Node checks header and request deadlines this often (30 s by default): a silent socket would live that much longer.
    connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs),
  });
  // A socket quiet while its request waits for the upstream is not stalled: never cut one before the upstream timeout.
  server.timeout = Math.max(config.socketTimeoutMs, config.upstreamTimeoutMs + 1000);
  // Behind a trusted proxy every socket is the proxy's: a per-address cap would cap all clients together.
  limitConnections(server, { maxConnections: config.maxConnections, maxPerAddress: config.trustProxy ? undefined : config.maxConnectionsPerClient, logger });
  answerMalformedRequests(server, refusedEarly);
  continueWhenBodyIsRead(server);
  passOnOtherExpectations(server);
  const drainer = trackForDrain(server);
  closeUnreadBodies(server, UNREAD_BODY_GRACE_MS);
  return { server, drainer };
}

/** Listens on HOST:PORT (0 = any free port); the stop drains the server before anything else closes. */
export function listen(server: Server, { config }: Wiring): Promise<ListenAddress> {
  return listenAt(server, config.host, config.port);
}

/** The separate metrics listener, when METRICS_PORT is set; resolves with its URL. */
export async function startMetricsListener({ config, logger, defer }: Wiring, registry: Registry): Promise<string | undefined> {
  if (config.metricsPort === undefined) return undefined;
  const metricsServer = await startMetricsServer({ registry, host: config.metricsHost, port: config.metricsPort, report: directRouteReporter(logger) });
  defer(() => metricsServer.close());
  return metricsServer.url;
}
