import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler, type Response } from 'express';
import type { Logger } from '../../lib/logger';
import { expressErrorReporter } from '../../lib/report-error';
import { requestIdOf } from '../../lib/request-id';
import type { OpenApiDocument } from '../../openapi/document';
import { documentRoutes } from '../../openapi/document-routes';
import { refuseUnmetExpectation } from '../http/expect-continue';
import { requireAdminToken, type AdminAuthOptions } from './admin-auth';
import { createAdminHandlers, type AdminServices } from './admin-handlers';
import { adminRoutes } from './admin-routes';
import { adminState } from './admin-state';

/** Admin bodies are small: a reason, a plan's two numbers, a key. */
const ADMIN_BODY_LIMIT_BYTES = 16 * 1024;
export const ADMIN_BASE_PATH = '/admin/v1';

export interface AdminAppDeps extends AdminAuthOptions {
  services: AdminServices;
  /** openapi/admin.yaml, loaded once. */
  document: OpenApiDocument;
  logger: Pick<Logger, 'info' | 'error'>;
}

/**
 * The admin listener's Express app: `GET /openapi.json` for anyone who reaches the address (the
 * contract holds no data), every other path behind the admin token, then the document's routes.
 */
export function createAdminApp(deps: AdminAppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(startAdminRequest(deps.logger));
  app.use(refuseUnmetExpectation);
  // The contract: every admin answer carries no-store, its document too.
  app.use(documentRoutes(deps.document, { cacheControl: 'no-store' }));
  app.use(requireAdminToken(deps));
  app.use(
    adminRoutes({
      document: deps.document,
      handlers: createAdminHandlers(deps.services),
      basePath: ADMIN_BASE_PATH,
      maxBodyBytes: ADMIN_BODY_LIMIT_BYTES,
    }),
  );
  app.use(expressErrorReporter({ logger: deps.logger, message: 'admin request failed', describe: describeAdminRequest }));
  return app;
}

/**
 * Gives the request its id (echoed in `X-Request-Id`, written into audit entries), the headers
 * of a JSON API that must never be cached or sniffed, and one log line when it ends. The line names
 * the operation, never the path, query or body: an operator may have pasted a secret into any of them.
 */
function startAdminRequest(logger: Pick<Logger, 'info'>): RequestHandler {
  return function startAdminRequest(req, res, next) {
    const startedAt = performance.now();
    const state = adminState(res);
    state.requestId = requestIdOf(req);
    res.setHeader('X-Request-Id', state.requestId);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.once('close', function logAdminRequest() {
      logger.info(
        {
          requestId: state.requestId,
          method: req.method,
          operation: state.operation?.operationId ?? null,
          status: res.statusCode,
          completed: res.writableFinished,
          actor: state.actor ?? null,
          ms: Math.round(performance.now() - startedAt),
        },
        'admin request',
      );
    });
    next();
  };
}

/** What a 5xx line says of the request: its operation's path template, not the path as sent. */
function describeAdminRequest(req: IncomingMessage & { res?: Response }) {
  const state = req.res ? adminState(req.res) : undefined;
  return { requestId: state?.requestId, method: req.method, path: state?.operation ? `${ADMIN_BASE_PATH}${state.operation.pathTemplate}` : '(no admin operation)' };
}
