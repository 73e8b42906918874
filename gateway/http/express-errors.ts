import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ApiError } from '../../lib/api-error';
import type { Logger } from '../../lib/logger';
import { renderError } from '../../lib/render-error';
import { describeExpressRequest, expressErrorReporter } from '../../lib/report-error';

/** The Express app's last two handlers: unknown paths and stray errors both end as Error bodies. */
export const notFound: RequestHandler = function notFound(req, res) {
  renderError(res, new ApiError('not_found', `Nothing at ${req.method} ${req.path}.`));
};

/**
 * A bug in a portal route becomes a generic 500 `internal_error` (its details never leave the
 * process) and one log line with the original error and a request id, which the response
 * carries in `X-Request-Id` so a report can be matched to the line.
 */
export function expressErrorHandler(logger: Pick<Logger, 'error'>): ErrorRequestHandler {
  return expressErrorReporter({ logger, message: 'request failed', describe: describeExpressRequest, echoRequestId: true });
}
