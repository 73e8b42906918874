import type { IncomingMessage, ServerResponse } from 'node:http';
import { ADMIN_DOCUMENT_PATH, loadOpenApiDocument } from '../../openapi/document';
import { createAdminApp } from '../admin/admin-app';
import { clientKey } from '../http/client-ip';
import { refuseMalformedHead, type CountRefusal } from '../http/malformed-requests';
import type { Wiring } from './context';
import type { Identity } from './identity';
import type { RequestLog } from './request-log';
import { rootCause } from './root-cause';
import { listenAt } from '../http/listen-address';
import { createHttpServer } from './server';

/** Admin requests are short: a stop waits this long at most for those in flight. */
const ADMIN_DRAIN_MS = 2000;

/**
 * The admin API on its own listener (ADMIN_HOST:ADMIN_PORT), when ADMIN_TOKEN is set; resolves
 * with its base URL. It has the public server's edge (caps, deadlines, malformed requests) but
 * none of its routes, and the public server none of its.
 */
export async function startAdminListener(
  w: Wiring,
  { identity, requestLog }: { identity: Identity; requestLog: RequestLog },
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
    failures: identity.limiters.adminAuthFailures,
    // The socket's address even with TRUST_PROXY: the admin listener is not behind the load balancer, and a forged X-Forwarded-For must not escape the count.
    clientKey: (req) => clientKey(req, false),
    services: { ...identity.admin, requestLog },
    document: loadOpenApiDocument(ADMIN_DOCUMENT_PATH),
    logger: logger.child({ listener: 'admin' }),
  });
  server.on('request', function adminRequest(req: IncomingMessage, res: ServerResponse) {
    if (refuseMalformedHead(req, res, notCounted)) return;
    app(req, res);
  });
  return url;
}
