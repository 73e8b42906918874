import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError } from '../lib/api-error';
import { renderError } from '../lib/render-error';

/** The Express app's last two handlers: unknown paths and stray errors both end as Error bodies. */
export const notFound: RequestHandler = function notFound(req, res) {
  renderError(res, new ApiError('not_found', `Nothing at ${req.method} ${req.path}.`));
};

export const renderExpressError: ErrorRequestHandler = function renderExpressError(err, _req, res, _next) {
  renderError(res, err);
};
