import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Environment, GatewayRequest } from '../pipeline/pipeline';
import { createRequestIds, requestIdOf } from '../../lib/request-id';
import type { DirectRoutes } from './direct-routes';
import { ResponseHeaders } from './response-headers';
import { refuseMalformedHead, type CountRefusal } from './malformed-requests';

export interface ApiMount {
  /** Public prefix without trailing slash: `/v1`, `/staging/v1`. */
  prefix: string;
  environment: Environment;
  run(req: GatewayRequest, res: ServerResponse): void;
}

const SLASH = 0x2f;
const NO_DIRECT_ROUTES: DirectRoutes = { find: () => undefined };
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/**
 * `GET http://host/v1/pets` (absolute form, which HTTP/1.1 servers must accept) as `/v1/pets`, the
 * path kept as sent; anything else (`*`, garbage) is left for the routes to refuse.
 */
function originForm(url: string): string {
  const authority = ABSOLUTE_FORM.exec(url);
  if (!authority) return url;
  const rest = url.slice(authority[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

export interface FrontHandlerOptions {
  /** Paths answered without Express (health, metrics). */
  direct?: DirectRoutes;
  /** Counts the refusals made before routing. */
  refusedEarly?: CountRefusal;
}

/**
 * The Node server's request handler. API traffic goes straight into its environment's compiled
 * pipeline — Express's router costs more per request than the rest of the gateway — the
 * operator's paths to their direct routes, and every other path (portal, docs) to the Express app.
 */
export function createFrontHandler(
  mounts: readonly ApiMount[],
  app: (req: IncomingMessage, res: ServerResponse) => void,
  { direct = NO_DIRECT_ROUTES, refusedEarly = () => {} }: FrontHandlerOptions = {},
) {
  // Longest prefix first, so /staging/v1 is never mistaken for anything shorter.
  const ordered = [...mounts].sort((a, b) => b.prefix.length - a.prefix.length).map((mount) => ({ mount, below: `${mount.prefix}/` }));
  const freshRequestId = createRequestIds();
  return function frontHandler(req: IncomingMessage, res: ServerResponse): void {
    if (refuseMalformedHead(req, res, refusedEarly)) return;
    let url = req.url ?? '/';
    if (url.charCodeAt(0) !== SLASH) url = req.url = originForm(url);
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    for (const { mount, below } of ordered) {
      if (path === mount.prefix || path.startsWith(below)) {
        const gw = req as GatewayRequest;
        // Every field from the start, in one order: each step then reads one object shape, not one per step.
        gw.ctx = {
          requestId: requestIdOf(req, freshRequestId),
          environment: mount.environment,
          prefix: mount.prefix,
          apiPath: path.slice(mount.prefix.length) || '/',
          search: q === -1 ? '' : url.slice(q),
          startedAt: performance.now(),
          headers: new ResponseHeaders(),
          route: undefined,
          operation: undefined,
          keyId: undefined,
          accountId: undefined,
          plan: undefined,
          query: undefined,
          cacheLookup: undefined,
          body: undefined,
          onUpstreamResponse: undefined,
          sharedFill: false,
          upstreamSearch: undefined,
          upstreamCall: undefined,
          errorCode: undefined,
          cacheStatus: undefined,
        };
        mount.run(gw, res);
        return;
      }
    }
    const answerDirectly = direct.find(path);
    if (answerDirectly !== undefined) answerDirectly(req, res);
    else app(req, res);
  };
}
