import type { ServerResponse } from 'node:http';
import type { Logger } from '../../lib/logger';
import { renderError } from '../../lib/render-error';
import type { GatewayRequest } from './pipeline';

/**
 * The API pipeline's last word on anything a step throws or rejects with: an Error body (a bug
 * becomes a generic 500 `internal_error`, its details never leave the process), and for a 5xx
 * one log line with the request id and the original error.
 */
export function pipelineErrorHandler(logger: Pick<Logger, 'error'>) {
  return function onPipelineError(err: unknown, req: GatewayRequest, res: ServerResponse): void {
    // Headers the steps set so far (request id, rate limit, deprecation, CORS) go out with the Error body.
    if (!res.headersSent) req.ctx.headers.applyTo(res);
    const apiError = renderError(res, err);
    if (apiError.status >= 500) logger.error({ requestId: req.ctx.requestId, code: apiError.code, err: apiError.cause ?? apiError }, 'request failed');
  };
}
