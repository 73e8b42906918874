import type { OperationTable } from '../../openapi/operations';
import type { Step } from '../pipeline/pipeline';

/** Finds the OpenAPI operation early, so later steps (deprecation headers, 401s) know it; refusing comes after auth. */
export function matchRoute(operations: OperationTable): Step {
  return function matchRouteStep(req, _res, next) {
    const route = operations.match(req.method ?? 'GET', req.ctx.apiPath);
    req.ctx.route = route;
    if (route.kind === 'operation') req.ctx.operation = route.operation;
    next();
  };
}
