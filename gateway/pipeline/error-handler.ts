import type { ServerResponse } from 'node:http';
import type { Logger } from '../../lib/logger';
import { createErrorReporter, type ReportOptions } from '../../lib/report-error';
import { recordedPath } from '../request-log/request-log';
import type { GatewayRequest } from './pipeline';

/** The API request as its line shows it: the public path without the query, a key in it redacted, its length bounded. */
const describeApiRequest = (req: GatewayRequest) => ({ requestId: req.ctx.requestId, method: req.method, path: recordedPath(req.ctx.prefix, req.ctx.apiPath, '') });

/**
 * The API pipeline's last word on anything a step throws or rejects with: an Error body (a bug
 * becomes a generic 500 `internal_error`, its details never leave the process), and for a 5xx
 * one log line with the request id and the original error.
 */
export function pipelineErrorHandler(logger: Pick<Logger, 'error'>) {
  const report = createErrorReporter({ logger, message: 'request failed', describe: describeApiRequest });
  return function onPipelineError(err: unknown, req: GatewayRequest, res: ServerResponse, options?: ReportOptions): void {
    // Headers the steps set so far (request id, rate limit, deprecation, CORS) go out with the Error body.
    if (!res.headersSent) req.ctx.headers.applyTo(res);
    req.ctx.errorCode = report(err, req, res, options).code;
  };
}
