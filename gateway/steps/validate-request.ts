import { readJsonBody } from '../../lib/read-json-body';
import type { Step } from '../pipeline';

/**
 * Checks parameters and body against the OpenAPI operation before the upstream is touched.
 * The raw body is kept so the proxy forwards exactly the bytes that were validated.
 */
export function validateRequest({ maxBodyBytes }: { maxBodyBytes: number }): Step {
  return function validateRequestStep(req, _res, next) {
    const { route, search } = req.ctx;
    if (route?.kind !== 'operation') return next();
    const op = route.operation;
    op.parsePathParams(route.rawParams);
    // A valid query may have been parsed already, to start the cache read early.
    req.ctx.query ??= op.parseQuery(new URLSearchParams(search));
    if (!op.acceptsBody) return next();
    return readJsonBody(req, maxBodyBytes).then((body) => {
      op.checkBody(body.value);
      req.ctx.body = body.raw;
      next();
    });
  };
}
