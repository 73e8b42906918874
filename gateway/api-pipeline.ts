import type { ServerResponse } from 'node:http';
import type { Logger } from '../lib/logger';
import { MAX_BODY_BYTES } from '../lib/read-json-body';
import { renderError } from '../lib/render-error';
import type { OperationTable } from '../openapi/operations';
import { composePipeline, type Environment, type GatewayRequest } from './pipeline';
import { authenticate, type KeyChecker } from './steps/authenticate';
import { deprecationHeaders } from './steps/deprecation-headers';
import { logRequest } from './steps/log-request';
import { matchRoute } from './steps/match-route';
import { proxyToUpstream } from './steps/proxy';
import { refuseUnknownRoute } from './steps/refuse-unknown-route';
import { validateRequest } from './steps/validate-request';
import { createLinkRewriter } from './upstream-links';

export interface ApiPipelineOptions {
  environment: Environment;
  prefix: string;
  upstreamUrl: string;
  publicUrl: string;
  upstreamTimeoutMs: number;
  operations: OperationTable;
  keys: KeyChecker;
  logger: Logger;
  now: () => Date;
}

/**
 * The API path of one environment, as data: each step is one concern, in the order the
 * contract needs (401 before 400; deprecation headers on every response, 401s included).
 */
export function createApiPipeline(o: ApiPipelineOptions) {
  const onError = (err: unknown, req: GatewayRequest, res: ServerResponse) => {
    const apiError = renderError(res, err);
    if (apiError.status >= 500) o.logger.error({ requestId: req.ctx.requestId, code: apiError.code, err: apiError.cause ?? apiError }, 'request failed');
  };
  const proxy = proxyToUpstream({
    upstreamUrl: o.upstreamUrl,
    timeoutMs: o.upstreamTimeoutMs,
    links: createLinkRewriter({ upstreamUrl: o.upstreamUrl, publicUrl: o.publicUrl, prefix: o.prefix }),
    onError,
  });
  const run = composePipeline(
    [
      logRequest(o.logger),
      matchRoute(o.operations),
      deprecationHeaders({ noticeUrl: `${o.publicUrl}/portal/deprecations` }),
      authenticate(o.keys),
      refuseUnknownRoute({ now: () => o.now().getTime() }),
      validateRequest({ maxBodyBytes: MAX_BODY_BYTES }),
      proxy.step,
    ],
    onError,
  );
  return { prefix: o.prefix, environment: o.environment, run, close: proxy.close };
}
