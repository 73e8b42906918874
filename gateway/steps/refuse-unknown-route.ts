import { ApiError } from '../../lib/api-error';
import type { Step } from '../pipeline/pipeline';

/** 404 / 405 (with `Allow`) for what the document does not define; 410 for an operation past its sunset. */
export function refuseUnknownRoute({ now }: { now: () => number }): Step {
  return function refuseUnknownRouteStep(req, _res, next) {
    const { route, prefix, apiPath } = req.ctx;
    if (!route || route.kind === 'not_found') {
      return next(new ApiError('not_found', `No operation at ${req.method} ${prefix}${apiPath}.`));
    }
    if (route.kind === 'method_not_allowed') {
      return next(new ApiError('method_not_allowed', `${req.method} is not allowed on ${prefix}${apiPath}; allowed: ${route.allow}.`, { headers: { Allow: route.allow } }));
    }
    const { sunset } = route.operation;
    if (sunset && now() >= sunset.getTime()) {
      return next(new ApiError('gone', `${route.operation.method} ${prefix}${route.operation.pathTemplate} was removed on ${sunset.toUTCString()}; see the deprecation notice in the Link header for its replacement.`));
    }
    next();
  };
}
