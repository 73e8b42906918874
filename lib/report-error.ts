import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Request } from 'express';
import { toApiError, type ApiError } from './api-error';
import { renderError } from './render-error';
import { requestIdOf } from './request-id';

/** What a 5xx log line says about the request that failed. */
export interface FailedRequest {
  requestId: string | undefined;
  method: string | undefined;
  path: string;
}

export interface ErrorReporterOptions<Req extends IncomingMessage> {
  /** Where 5xx lines go; without one nothing is logged. Request bodies are never passed to it. */
  logger?: { error(obj: object, msg: string): void };
  /** The line's message, which names the surface ("request failed", "pet store request failed"). */
  message: string;
  /** Who the request was; asked only for a 5xx, so a 4xx costs nothing. */
  describe: (req: Req) => FailedRequest;
  /** Sends the request id in `X-Request-Id` with a 5xx, where nothing else does, so a report can be matched to the line. */
  echoRequestId?: boolean;
}

export interface ReportOptions {
  /** Render without a line: the failure is logged once elsewhere (the circuit breaker) or would flood the log (load shedding). */
  quiet?: boolean;
}

export type ErrorReporter<Req extends IncomingMessage> = (err: unknown, req: Req, res: ServerResponse, options?: ReportOptions) => ApiError;

/**
 * The one decision of how a failed request is told: a 4xx is the client's and is not logged
 * (the access line records it), a 5xx is one error line with the cause, method, path and request
 * id, whose details never reach the client; both end as the same Error body.
 */
export function createErrorReporter<Req extends IncomingMessage>({ logger, message, describe, echoRequestId = false }: ErrorReporterOptions<Req>): ErrorReporter<Req> {
  return function reportError(err, req, res, options) {
    const apiError = toApiError(err);
    if (apiError.status >= 500 && !options?.quiet) {
      const { requestId, method, path } = describe(req);
      if (echoRequestId && requestId !== undefined && !res.headersSent) res.setHeader('X-Request-Id', requestId);
      logger?.error({ requestId, code: apiError.code, method, path, err: apiError.cause ?? apiError }, message);
    }
    return renderError(res, apiError);
  };
}

/** The reporter as the last handler of an Express app or router (Express tells error handlers by their four parameters). */
export function expressErrorReporter(options: ErrorReporterOptions<Request>): ErrorRequestHandler {
  const report = createErrorReporter(options);
  return function renderExpressError(err, req, res, _next) {
    report(err, req, res);
  };
}

/** An Express request (app or router) as its line shows it; the id is the client's when sane, else a fresh one. */
export function describeExpressRequest(req: IncomingMessage & { method: string; baseUrl: string; path: string }): FailedRequest {
  return { requestId: requestIdOf(req), method: req.method, path: `${req.baseUrl}${req.path}` };
}
