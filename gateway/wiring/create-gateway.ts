import type { Server } from 'node:http';
import type { Database } from '../../db/database';
import { createLogger, type Logger } from '../../lib/logger';
import { loadOpenApiDocument, type OpenApiDocument } from '../../openapi/document';
import { environmentPrefixes } from '../../openapi/environments';
import { compileOperations } from '../../openapi/operations';
import { ADMIN_BASE_PATH } from '../admin/admin-app';
import type { Config } from '../config';
import type { DrainReport, HttpDrain } from '../http/drain';
import { createFrontHandler } from '../http/front-handler';
import type { CountRefusal } from '../http/malformed-requests';
import { createPrometheusMetrics } from '../metrics/prometheus-metrics';
import { createApiMounts } from './api-mounts';
import type { Wiring } from './context';
import { createDefer } from './defer';
import { createIdentity } from './identity';
import { createPortalApp } from './portal';
import { startAdminListener } from './admin';
import { createOperatorRoutes } from './operator-routes';
import { createRequestLog } from './request-log';
import { createHttpServer, listen, startMetricsListener } from './server';
import { openStores } from './stores';

export interface GatewayOptions {
  /** Injectable clock (sunset, key expiry, sessions). */
  now?: () => Date;
  logger?: Logger;
  /** How often expired sessions are deleted (default hourly; tests shorten it). */
  sessionPurgeIntervalMs?: number;
  /** The public contract, loaded once; tests pass a variant (another sunset), the process reads openapi/animal-store.yaml. */
  apiDocument?: OpenApiDocument;
  /** An open database to use instead of the one config names; the caller closes it (tests read what the gateway wrote). */
  database?: Database;
}

export interface Gateway {
  /**
   * Listens on config.port (0 = any free port); resolves with the bound base URL, with the
   * metrics listener's URL when METRICS_PORT is set, and the admin listener's when ADMIN_TOKEN is.
   */
  start(): Promise<StartedGateway>;
  /**
   * Stops accepting, lets in-flight requests finish for up to SHUTDOWN_TIMEOUT_MS (then cuts
   * them), closes stores. Calling it again returns the same stop.
   */
  stop(): Promise<StopReport>;
}

export interface StartedGateway {
  /** A base URL a client on this machine can call. */
  url: string;
  port: number;
  /** The address actually bound, e.g. `0.0.0.0:8080 (all interfaces)`. */
  bound: string;
  metricsUrl?: string;
  /** The admin listener's base URL, when ADMIN_TOKEN is set. */
  adminUrl?: string;
}

/** What the start says when the admin API is off: how to turn it on. */
export const ADMIN_OFF = 'off: set ADMIN_TOKEN (at least 32 characters) to serve it on ADMIN_HOST:ADMIN_PORT (default 127.0.0.1:8081)';

export interface StopReport extends DrainReport {
  /** Stores and services that failed to close (each is logged); 0 means a clean stop. */
  closeFailures: number;
}

/** A store that does not close within this is given up on, so a stop always ends. */
const CLOSE_TIMEOUT_MS = 5000;

/** The composition root: every dependency is built here, from validated config, and nowhere else. */
export function createGateway(config: Config, options: GatewayOptions = {}): Gateway {
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const cleanups = createDefer({ timeoutMs: CLOSE_TIMEOUT_MS, onFailure: (err) => logger.error({ err }, 'error while shutting down') });
  const w: Wiring = { config, logger, now: options.now ?? (() => new Date()), defer: cleanups.defer };
  let http: { server: Server; drainer: HttpDrain } | undefined;
  let stopping: Promise<StopReport> | undefined;

  // Each step registers its own cleanup as it builds; the stop runs them in reverse.
  async function assemble() {
    const document = options.apiDocument ?? loadOpenApiDocument();
    const operations = compileOperations(document);
    const prefixes = environmentPrefixes(document);
    const stores = await openStores(w, operations, options.database);
    const identity = await createIdentity(w, stores, { injectedClock: options.now, sessionPurgeIntervalMs: options.sessionPurgeIntervalMs });
    const requestLog = createRequestLog(w, stores);
    const { metrics, registry } = createPrometheusMetrics({ keyVerifier: identity.verifier, requestLogWriter: requestLog.writer });
    // Refusals before routing come from the server's parser events and from the front handler's Host check.
    const refusedEarly: CountRefusal = (code) => metrics.refusedEarly(code);
    http = createHttpServer(w, refusedEarly);
    const { url, port, bound } = await listen(http.server, w);
    const publicUrl = config.publicUrl ?? `http://localhost:${port}`;
    const mounts = createApiMounts(w, { stores, identity, operations, prefixes, metrics, publicUrl, ownUrl: url, requestLog, requestsInFlight: http.drainer.requestsInFlight });
    const app = createPortalApp(w, { stores, identity, document, operations, prefixes, publicUrl, requestLog });
    const direct = createOperatorRoutes(w, { stores, registry });
    http.server.on('request', createFrontHandler(mounts, app, { direct, refusedEarly }));
    const metricsUrl = await startMetricsListener(w, registry);
    const adminUrl = await startAdminListener(w, { identity, requestLog });
    const admin = adminUrl ? `${adminUrl}${ADMIN_BASE_PATH}/ (contract: ${adminUrl}/openapi.json)` : ADMIN_OFF;
    logger.info({ url, bound, publicUrl, upstreams: stores.upstreams.urls, database: stores.db.kind, metricsUrl, admin }, 'gateway listening');
    return { url, port, metricsUrl, adminUrl, bound };
  }

  /** Drains the server first, then runs the cleanups; the report is logged at `level` (debug after a failed start, whose error is the news). */
  async function shutDown(level: 'info' | 'debug'): Promise<StopReport> {
    const drained = http?.server.listening ? await http.drainer.drain(config.shutdownTimeoutMs) : { inFlight: 0, cut: 0, drainMs: 0 };
    if (drained.cut) logger.warn({ cut: drained.cut, shutdownTimeoutMs: config.shutdownTimeoutMs }, 'requests outlived SHUTDOWN_TIMEOUT_MS; their connections were cut');
    const report = { ...drained, closeFailures: await cleanups.runAll() };
    logger[level](report, 'gateway stopped');
    return report;
  }

  return {
    async start() {
      try {
        return await assemble();
      } catch (err) {
        await (stopping ??= shutDown('debug'));
        throw err;
      }
    },
    stop: () => (stopping ??= shutDown('info')),
  };
}
