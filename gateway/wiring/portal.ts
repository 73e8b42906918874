import type { IncomingMessage } from 'node:http';
import express from 'express';
import { loadOpenApiDocument, PORTAL_DOCUMENT_PATH, type OpenApiDocument } from '../../openapi/document';
import { documentRoutes } from '../../openapi/document-routes';
import type { EnvironmentPrefixes } from '../../openapi/environments';
import type { OperationTable } from '../../openapi/operations';
import { createPlanUsage } from '../../identity/plan-usage';
import { createPortalApiRouter } from '../../portal/api/router';
import { createKeyOwnership } from '../../identity/key-ownership';
import { createApiDocs } from '../../portal/api-docs';
import { createPortal, createPortalAssets } from '../../portal/create-portal';
import { clientKey } from '../http/client-ip';
import { refuseUnmetExpectation } from '../http/expect-continue';
import { expressErrorHandler, notFound } from '../http/express-errors';
import { securityHeaders } from '../http/security-headers';
import type { Wiring } from './context';
import type { Identity } from './identity';
import type { RequestLog } from './request-log';
import type { Stores } from './stores';

export interface PortalAppDeps {
  stores: Stores;
  identity: Identity;
  document: OpenApiDocument;
  /** The compiled operations and the environments' prefixes, which the portal's pages show. */
  operations: OperationTable;
  prefixes: EnvironmentPrefixes;
  /** Where clients reach the gateway: the portal's links and cookies use it. */
  publicUrl: string;
  requestLog: Pick<RequestLog, 'read'>;
}

/** The Express app for every path that is not the API or the operator's (operator-routes.ts): the contract, the portal, its API and docs. */
export function createPortalApp({ config, logger, now }: Wiring, { stores, identity, document, operations, prefixes, publicUrl, requestLog }: PortalAppDeps): express.Express {
  const { db } = stores;
  const { accounts, sessions, apiKeys, limiters } = identity;
  const app = express();
  app.disable('x-powered-by');
  // One hop, as clientIp trusts: req.ip and req.protocol then come from what our own proxy wrote.
  app.set('trust proxy', config.trustProxy ? 1 : false);
  const portalAssets = createPortalAssets();
  app.use(securityHeaders({ publicUrl }));
  app.use(refuseUnmetExpectation);
  app.use(documentRoutes(document, { publicUrl }));
  app.use(createPortal({ publicUrl, sessions, accounts, assets: portalAssets, operations, prefixes, usage: { dailyUsage: identity.dailyUsage, apiKeys } }));
  app.use(createApiDocs({ apiDocument: document, portalDocument: loadOpenApiDocument(PORTAL_DOCUMENT_PATH), assets: portalAssets, publicUrl }));
  app.use(
    '/portal/api',
    createPortalApiRouter({
      accounts,
      sessions,
      apiKeys,
      dailyUsage: identity.dailyUsage,
      planUsage: createPlanUsage({ db, plans: identity.plans, usage: identity.accountUsage, now }),
      loginLimiter: limiters.login,
      signupLimiter: limiters.signup,
      clientKey: (req: IncomingMessage) => clientKey(req, config.trustProxy),
      requestLog: { ownsKey: createKeyOwnership(db), read: requestLog.read },
      publicUrl,
      clock: now,
      logger,
    }),
  );
  app.use(notFound);
  app.use(expressErrorHandler(logger));
  return app;
}
