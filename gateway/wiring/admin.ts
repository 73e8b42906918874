import type { IncomingMessage, ServerResponse } from 'node:http';
import { ADMIN_DOCUMENT_PATH, loadOpenApiDocument } from '../../openapi/document';
import { createAdminApp } from '../admin/admin-app';
import { ADMIN_FAILURE_WINDOW_SECONDS, MAX_ADMIN_TOKEN_FAILURES } from '../admin/admin-auth';
import { clientKey } from '../http/client-ip';
import { refuseMalformedHead, type CountRefusal } from '../http/malformed-requests';
import { createLimiterFactory } from '../rate-limit/limiter-factory';
import type { Wiring } from './context';
import type { Identity } from './identity';
import type { RequestLog } from './request-log';
import { rootCause } from './root-cause';
import { createHttpServer, listenAt } from './server';
import type { Stores } from './stores';

/** Admin requests are short: a stop waits this long at most for those in flight. */
const ADMIN_DRAIN_MS = 2000;

/**
 * The admin API on its own listener (ADMIN_HOST:ADMIN_PORT), when ADMIN_TOKEN is set; resolves
 * with its base URL. It has the public server's edge (caps, deadlines, malformed requests) but
 * none of its routes, and the public server none of its.
 */
export async function startAdminListener(
  w: Wiring,
  { identity, redis, requestLog }: { identity: Identity; redis: Stores['redis']; requestLog: RequestLog },
): Promise<string | undefined> {
  const { config, logger, defer } = w;
  if (config.adminTokens.length === 0) return undefined;
  const notCounted: CountRefusal = () => {};
  const { server, drainer } = createHttpServer(w, notCounted);
  let url: string;
  try {
    ({ url } = await listenAt(server, config.adminHost, config.adminPort));
  } catch (err) {
    throw new Error(`The admin listener could not bind ADMIN_HOST:ADMIN_PORT (${config.adminHost}:${config.adminPort}): ${rootCause(err)}`, { cause: err });
  }
  defer(() => drainer.drain(Math.min(config.shutdownTimeoutMs, ADMIN_DRAIN_MS)).then(() => {}));
  const app = createAdminApp({
    tokens: config.adminTokens,
    failures: createLimiterFactory({ redis: redis?.publisher, keyPrefix: config.redisKeyPrefix })({
      keyPrefix: 'admin_auth_fail',
      points: MAX_ADMIN_TOKEN_FAILURES,
      duration: ADMIN_FAILURE_WINDOW_SECONDS,
    }),
    // The socket's address even with TRUST_PROXY: the admin listener is not behind the load balancer, and a forged X-Forwarded-For must not escape the count.
    clientKey: (req) => clientKey(req, false),
    services: { ...identity.admin, requestLog },
    document: loadOpenApiDocument(ADMIN_DOCUMENT_PATH),
    ownUrl: url,
    logger: logger.child({ listener: 'admin' }),
  });
  server.on('request', function adminRequest(req: IncomingMessage, res: ServerResponse) {
    if (refuseMalformedHead(req, res, notCounted)) return;
    app(req, res);
  });
  return url;
}
