import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Database } from '../../db/database';
import { openDatabase } from '../../db/open-database';
import { createAccountService } from '../../identity/account-service';
import { createApiKeyService } from '../../identity/api-key-service';
import { createKeyVerifier } from '../../identity/key-verifier';
import { createLoginLimiter } from '../../identity/login-limiter';
import { createPasswordHasher } from '../../identity/password';
import { createSignupLimiter } from '../../identity/signup-limiter';
import { migrateKeys } from '../../identity/migrations';
import { createRedisRevocationBus } from '../../identity/redis-revocation-bus';
import { createLocalRevocationBus, type RevocationBus } from '../../identity/revocation-bus';
import { createSessionService } from '../../identity/session-service';
import { schedulePurgeOfSessions } from '../../identity/session-purge';
import { createLogger, type Logger } from '../../lib/logger';
import { createRedis } from './redis';
import { rootCause } from './root-cause';
import { loadOpenApiDocument, PORTAL_DOCUMENT_PATH } from '../../openapi/document';
import { documentRoutes } from '../../openapi/document-routes';
import { compileOperations } from '../../openapi/operations';
import { startPetStore, type RunningPetStore } from '../../petstore/open-pet-store';
import { createPortalApiRouter } from '../../portal/api/router';
import { createApiDocs } from '../../portal/api-docs';
import { createPortal, createPortalAssets } from '../../portal/create-portal';
import { createApiPipeline } from './api';
import { createMemoryListCache } from '../cache/memory-list-cache';
import { createRedisListCache } from '../cache/redis-list-cache';
import { createTurnEnd } from '../pipeline/turn-end';
import { clientIp, clientKey } from '../http/client-ip';
import type { Config } from '../config';
import { secureDataDir } from './data-dir';
import { loadOrCreateDevSecrets } from './dev-secrets';
import { expressErrorHandler, notFound } from '../http/express-errors';
import { securityHeaders } from '../http/security-headers';
import { originOf } from '../steps/cors';
import { createFrontHandler } from '../http/front-handler';
import { healthRoutes } from '../http/health';
import { answerMalformedRequests, type CountRefusal } from '../http/malformed-requests';
import { trackForDrain, type DrainReport, type HttpDrain } from '../http/drain';
import { limitConnections } from '../http/connection-limits';
import { continueWhenBodyIsRead } from '../http/expect-continue';
import { closeUnreadBodies } from '../http/unread-body';
import { createRateLimiter } from '../rate-limit/rate-limiter';
import { createLimiterFactory } from '../rate-limit/limiter-factory';
import { createCircuitBreaker } from '../upstream/circuit-breaker';
import { metricsRoutes } from '../metrics/metrics-routes';
import { startMetricsServer } from '../metrics/metrics-server';
import { createPrometheusMetrics } from '../metrics/prometheus-metrics';
import type { Environment } from '../pipeline/pipeline';

export interface GatewayOptions {
  /** Injectable clock (sunset, key expiry, sessions). */
  now?: () => Date;
  logger?: Logger;
  /** How often expired sessions are deleted (default hourly; tests shorten it). */
  sessionPurgeIntervalMs?: number;
}

export interface Gateway {
  /**
   * Listens on config.port (0 = any free port); resolves with the bound base URL, and with the
   * metrics listener's URL when METRICS_PORT is set.
   */
  start(): Promise<{ url: string; port: number; metricsUrl?: string }>;
  /**
   * Stops accepting, lets in-flight requests finish for up to SHUTDOWN_TIMEOUT_MS (then cuts
   * them), closes stores. Calling it again returns the same stop.
   */
  stop(): Promise<StopReport>;
}

export interface StopReport extends DrainReport {
  /** Stores and services that failed to close (each is logged); 0 means a clean stop. */
  closeFailures: number;
}

/** A store that does not close within this is given up on, so a stop always ends. */
const CLOSE_TIMEOUT_MS = 5000;
/** How long a body may keep arriving after its response (a refusal that did not read it) before the connection is cut. */
const UNREAD_BODY_GRACE_MS = 2000;

const PREFIXES: Record<Environment, string> = { production: '/v1', staging: '/staging/v1' };

/** The composition root: every dependency is built here, from validated config, and nowhere else. */
export function createGateway(config: Config, options: GatewayOptions = {}): Gateway {
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? createLogger({ level: config.logLevel });
  const closers: Array<() => Promise<void> | void> = [];
  let server: Server | undefined;
  let drainer: HttpDrain | undefined;
  let stopping: Promise<StopReport> | undefined;

  async function start() {
    try {
      return await assemble();
    } catch (err) {
      await stop();
      throw err;
    }
  }

  /** The keys database, opened and migrated; with DATABASE_URL, a failure names the server and its cause. */
  async function prepareDatabase(): Promise<Database> {
    try {
      const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
      closers.push(() => db.close());
      await migrateKeys(db);
      return db;
    } catch (err) {
      // The store's own error is the 503 clients see ("temporarily unavailable"); an operator needs the cause.
      if (!config.databaseUrl) throw err;
      throw new Error(`PostgreSQL at DATABASE_URL could not be reached or prepared: ${rootCause(err)}`, { cause: err });
    }
  }

  async function assemble() {
    if (!config.databaseUrl) {
      const { tightenedFrom } = secureDataDir(config.dataDir);
      if (tightenedFrom) logger.warn({ dataDir: config.dataDir, was: tightenedFrom, now: '700' }, 'DATA_DIR was open to other users; its permissions are now 700');
    }
    // Explicit secrets win; development fills the gaps from DATA_DIR (a production config requires both).
    const dev = config.sessionSecret && config.keyHashSecret ? undefined : loadOrCreateDevSecrets(config.dataDir);
    const secrets = { sessionSecret: config.sessionSecret ?? dev!.sessionSecret, keyHashSecret: config.keyHashSecret ?? dev!.keyHashSecret };

    const db = await prepareDatabase();

    const document = loadOpenApiDocument();
    const operations = compileOperations(document);

    const upstreams = {} as Record<Environment, string>;
    // The embedded stores answer only this process: other processes on the host cannot reach them past the gateway.
    const storeToken = randomBytes(32).toString('base64url');
    // Apart from `upstreams`, which the start-up log line shows: the token must never be logged.
    const upstreamTokens: Partial<Record<Environment, string>> = {};
    for (const environment of ['production', 'staging'] as const) {
      const remote = config.upstreams[environment];
      if (remote) {
        upstreams[environment] = remote;
        upstreamTokens[environment] = config.upstreamTokens[environment];
        continue;
      }
      const store: RunningPetStore = await startPetStore({
        db,
        schema: `petstore_${environment}`,
        operations,
        gatewayToken: storeToken,
        logger: logger.child({ petStore: environment }),
      });
      closers.unshift(() => store.close());
      upstreams[environment] = store.url;
      upstreamTokens[environment] = storeToken;
    }

    const redis = config.redisUrl ? await connectRedis(config.redisUrl, closers) : undefined;
    let revocations: RevocationBus = createLocalRevocationBus();
    if (redis) {
      const shared = await createRedisRevocationBus({ ...redis, channel: `${config.redisKeyPrefix}revocations` });
      closers.unshift(() => shared.close());
      revocations = shared;
    }
    const apiKeys = createApiKeyService({
      db,
      hashSecret: secrets.keyHashSecret,
      revocations,
      maxActiveKeysPerAccount: config.maxKeysPerAccount,
      now,
      onFlushError: (err) => logger.warn({ err }, 'could not record key usage; will retry'),
    });
    closers.unshift(() => apiKeys.close());
    const verifier = createKeyVerifier({ keys: apiKeys, revocations, ttlMs: 60_000, max: 100_000, now: options.now });
    closers.unshift(() => verifier.close());
    const { metrics, registry } = createPrometheusMetrics({ keyVerifier: verifier });
    // Refusals before routing come from the server's parser events and from the front handler's Host check.
    const refusedEarly: CountRefusal = (code) => metrics.refusedEarly(code);

    const app = express();
    app.disable('x-powered-by');
    // One hop, as clientIp trusts: req.ip and req.protocol then come from what our own proxy wrote.
    app.set('trust proxy', config.trustProxy ? 1 : false);
    const clientIpOf = (req: IncomingMessage) => clientIp(req, config.trustProxy);
    const clientKeyOf = (req: IncomingMessage) => clientKey(req, config.trustProxy);

    // The bound port is known only after listen; links need it when PUBLIC_URL is unset.
    // Host is checked by the front handler, which answers a request without one with an Error body (malformed-requests.ts).
    server = createServer({
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
    drainer = trackForDrain(server);
    closeUnreadBodies(server, UNREAD_BODY_GRACE_MS);
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(config.port, config.host, () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const publicUrl = config.publicUrl ?? `http://localhost:${port}`;
    const url = `http://${config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host}:${port}`;
    // Browser pages from PUBLIC_URL or from the gateway's own address may call the API (CORS).
    const corsOrigins = [...new Set([publicUrl, url].map(originOf).filter((o): o is string => o !== null))];

    const commands = redis?.publisher;
    const rateLimiter = createRateLimiter({ name: 'default', quota: config.rateLimitPerMinute, windowSeconds: 60, keyPrefix: `${config.redisKeyPrefix}rl:key`, redis: commands });
    const anonymousLimiter = createRateLimiter({
      name: 'anonymous',
      quota: config.anonymousRateLimitPerMinute,
      windowSeconds: 60,
      keyPrefix: `${config.redisKeyPrefix}rl:ip`,
      redis: commands,
    });
    // One turn end for the process: the turn's cache reads leave before its responses are written.
    const turnEnd = createTurnEnd();
    const cache =
      config.cacheTtlSeconds === 0
        ? undefined
        : commands
          ? createRedisListCache({
              redis: commands,
              prefix: config.redisKeyPrefix,
              ttlSeconds: config.cacheTtlSeconds,
              atTurnEnd: turnEnd.beforeWrites,
              localCopyBytes: config.cacheMaxBytes,
            })
          : createMemoryListCache({ ttlSeconds: config.cacheTtlSeconds, maxBytes: config.cacheMaxBytes });
    const mounts = (['production', 'staging'] as const).map((environment) =>
      createApiPipeline({
        environment,
        prefix: PREFIXES[environment],
        upstreamUrl: upstreams[environment],
        upstreamToken: upstreamTokens[environment],
        publicUrl,
        upstreamTimeoutMs: config.upstreamTimeoutMs,
        upstreamMaxSockets: config.upstreamMaxSockets,
        upstreamMaxQueue: config.upstreamMaxQueue,
        trustProxy: config.trustProxy,
        circuitBreaker: createCircuitBreaker({ environment, failureThreshold: config.circuitFailureThreshold, openMs: config.circuitOpenMs, logger }),
        operations,
        keys: verifier,
        usage: apiKeys,
        rateLimiter,
        anonymousLimiter,
        clientIp: clientIpOf,
        clientKey: clientKeyOf,
        cache,
        corsOrigins,
        logger,
        now,
        metrics,
        atTurnEnd: turnEnd.writes,
      }),
    );
    for (const m of mounts) closers.unshift(() => m.close());

    const checks: Record<string, () => Promise<void>> = { database: () => db.ping() };
    if (redis) checks.redis = async () => void (await redis.publisher.ping());
    const accounts = createAccountService({ db, passwords: createPasswordHasher({ maxQueued: config.passwordHashQueue }) });
    const portalLimits = {
      createLimiter: createLimiterFactory({ redis: commands, keyPrefix: config.redisKeyPrefix }),
      maxInFlightPerIp: config.passwordAttemptsInFlightPerIp,
    };
    const sessions = createSessionService({ db, secret: secrets.sessionSecret, now });
    const stopSessionPurge = schedulePurgeOfSessions(sessions, {
      intervalMs: options.sessionPurgeIntervalMs,
      onError: (err) => logger.warn({ err }, 'could not delete expired sessions; will retry'),
      onPurged: (count) => {
        if (count > 0) logger.info({ count }, 'deleted expired sessions');
      },
    });
    closers.unshift(stopSessionPurge);
    const portalAssets = createPortalAssets();
    app.use(securityHeaders({ publicUrl }));
    app.use(healthRoutes(checks));
    if (config.metricsToken) app.use(metricsRoutes({ registry, token: config.metricsToken }));
    app.use(documentRoutes(document));
    app.use(createPortal({ publicUrl, sessions, accounts, assets: portalAssets }));
    app.use(createApiDocs({ apiDocument: document, portalDocument: loadOpenApiDocument(PORTAL_DOCUMENT_PATH), assets: portalAssets }));
    app.use(
      '/portal/api',
      createPortalApiRouter({
        accounts,
        sessions,
        apiKeys,
        loginLimiter: createLoginLimiter(portalLimits),
        signupLimiter: createSignupLimiter(portalLimits),
        clientKey: clientKeyOf,
        publicUrl,
        clock: now,
        logger,
      }),
    );
    app.use(notFound);
    app.use(expressErrorHandler(logger));

    server.on('request', createFrontHandler(mounts, app, refusedEarly));
    let metricsUrl: string | undefined;
    if (config.metricsPort !== undefined) {
      const metricsServer = await startMetricsServer({ registry, host: config.metricsHost, port: config.metricsPort });
      closers.unshift(() => metricsServer.close());
      metricsUrl = metricsServer.url;
    }
    logger.info({ url, publicUrl, upstreams, database: db.kind, metricsUrl }, 'gateway listening');
    return { url, port, metricsUrl };
  }

  function stop(): Promise<StopReport> {
    stopping ??= shutDown();
    return stopping;
  }

  async function shutDown(): Promise<StopReport> {
    const drained = server?.listening && drainer ? await drainer.drain(config.shutdownTimeoutMs) : { inFlight: 0, cut: 0, drainMs: 0 };
    if (drained.cut) logger.warn({ cut: drained.cut, shutdownTimeoutMs: config.shutdownTimeoutMs }, 'requests outlived SHUTDOWN_TIMEOUT_MS; their connections were cut');
    let closeFailures = 0;
    while (closers.length) {
      const close = closers.shift()!;
      try {
        await withTimeout(Promise.resolve().then(close), CLOSE_TIMEOUT_MS);
      } catch (err) {
        closeFailures++;
        logger.error({ err }, 'error while shutting down');
      }
    }
    const report = { ...drained, closeFailures };
    logger.info(report, 'gateway stopped');
    return report;
  }

  return { start, stop };
}

function withTimeout(promise: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`did not close within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Two connections: a subscribed Redis connection can run no other command. */
async function connectRedis(url: string, closers: Array<() => Promise<void> | void>) {
  const publisher = createRedis(url, { autoPipelining: true });
  const subscriber = createRedis(url);
  closers.push(() => {
    publisher.disconnect();
    subscriber.disconnect();
  });
  try {
    await Promise.all([publisher.connect(), subscriber.connect()]);
  } catch (err) {
    throw new Error(`Redis at REDIS_URL is unreachable: ${rootCause(err)}`, { cause: err });
  }
  return { publisher, subscriber };
}
