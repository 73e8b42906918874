import { ApiError } from '../../lib/api-error';
import { declaresBody, readJsonBody } from '../../lib/read-json-body';
import { unsupportedExpectation } from '../http/expect-continue';
import type { Step } from '../pipeline/pipeline';

/**
 * Checks parameters and body against the OpenAPI operation before the upstream is touched.
 * The body forwarded is the parsed value serialised again: the upstream reads exactly the
 * object that was validated, not bytes a different parser could read differently (a
 * duplicate member, a number beyond double precision).
 */
export function validateRequest({ maxBodyBytes }: { maxBodyBytes: number }): Step {
  return function validateRequestStep(req, _res, next) {
    const { route, search } = req.ctx;
    if (route?.kind !== 'operation') return next();
    const op = route.operation;
    // Refused here, after the key and its budget, so the 417 carries their headers like any refusal.
    const unmet = unsupportedExpectation(req);
    if (unmet) throw unmet;
    op.parsePathParams(route.rawParams);
    // A valid query may have been parsed already, to start the cache read early.
    req.ctx.query ??= op.parseSearch(search);
    if (!op.acceptsBody) {
      // Only a validated body is ever sent upstream: a body this operation cannot take is refused, not silently dropped.
      if (declaresBody(req)) throw new ApiError('invalid_request', `${req.method} ${req.ctx.prefix}${op.pathTemplate} takes no request body.`);
      return next();
    }
    return readJsonBody(req, maxBodyBytes).then((body) => {
      op.checkBody(body.value);
      req.ctx.body = Buffer.from(JSON.stringify(body.value));
      next();
    });
  };
}
