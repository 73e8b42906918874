import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../lib/logger';
import { MAX_BODY_BYTES } from '../lib/read-json-body';
import { renderError } from '../lib/render-error';
import type { OperationTable } from '../openapi/operations';
import { composePipeline, type Environment, type GatewayRequest } from './pipeline';
import type { ListCache } from './cache/list-cache';
import type { RateLimiter } from './rate-limit/rate-limiter';
import { authenticate, type KeyChecker } from './steps/authenticate';
import { cors } from './steps/cors';
import { listCache } from './steps/list-cache';
import { deprecationHeaders } from './steps/deprecation-headers';
import { logRequest } from './steps/log-request';
import { matchRoute } from './steps/match-route';
import { proxyToUpstream } from './steps/proxy';
import { rateLimitPerKey } from './steps/rate-limit';
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
  /** Per key; shared by both environments, so a key's budget is one number. */
  rateLimiter: RateLimiter;
  /** Per client IP, for requests without a valid key. */
  anonymousLimiter: RateLimiter;
  clientIp: (req: IncomingMessage) => string;
  /** Undefined when CACHE_TTL_SECONDS=0: no cache step at all. */
  cache?: ListCache;
  /** Origins whose pages may call the API from a browser (CORS): PUBLIC_URL's and the gateway's own. */
  corsOrigins: readonly string[];
  logger: Logger;
  now: () => Date;
}

/**
 * The API path of one environment, as data: each step is one concern, in the order the
 * contract needs: 401 before 429 before 400; deprecation headers on every response, 401s
 * included; the cache only after every refusal, so a cached body never skips one.
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
      cors({ allowedOrigins: o.corsOrigins }),
      matchRoute(o.operations),
      deprecationHeaders({ noticeUrl: `${o.publicUrl}/portal/deprecations` }),
      authenticate({ keys: o.keys, anonymousLimiter: o.anonymousLimiter, clientIp: o.clientIp }),
      rateLimitPerKey(o.rateLimiter),
      refuseUnknownRoute({ now: () => o.now().getTime() }),
      validateRequest({ maxBodyBytes: MAX_BODY_BYTES }),
      ...(o.cache ? [listCache({ cache: o.cache, logger: o.logger, now: () => o.now().getTime() })] : []),
      proxy.step,
    ],
    onError,
  );
  return { prefix: o.prefix, environment: o.environment, run, close: proxy.close };
}
