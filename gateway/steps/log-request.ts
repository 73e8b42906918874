import type { ServerResponse } from 'node:http';
import type { Logger } from '../../lib/logger';
import { refusalOnSocket } from '../http/malformed-requests';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { GatewayRequest, Step } from '../pipeline/pipeline';
import { recordedPath } from '../request-log/request-log';
import type { RequestLogWriter } from '../request-log/request-log-writer';

/**
 * The status a request is counted, logged and recorded with when its client closed the connection
 * before any answer began (nginx's 499): it may have been counted against the key's limits and
 * reached the upstream, so it is shown, not lost.
 */
export const CLIENT_CLOSED_REQUEST = 499;

/** Counts each ended request of an authenticated key by day and outcome (identity's daily usage); must not block. */
export interface OutcomeRecorder {
  record(keyId: string, status: number): void;
}

/**
 * One structured line per API request when it ends: request id, key id (never the key), route,
 * status, latency; and the same response counted in the metrics and, for a request with a key,
 * in its daily usage and its key's request log, from the same listener. It listens for the
 * response's `close`, which comes after `finish` and also when the client leaves first, so every
 * request is counted once.
 */
export function logRequest(
  logger: Logger,
  metrics: Pick<GatewayMetrics, 'requestFinished'>,
  outcomes: OutcomeRecorder,
  requestLog?: Pick<RequestLogWriter, 'record'>,
): Step {
  // One listener function for every response (it finds its request through `res.req`): no closure per request.
  function requestEnded(this: ServerResponse): void {
    const req = this.req as GatewayRequest;
    const { ctx } = req;
    const route = ctx.operation?.operationId ?? 'unmatched';
    const ms = performance.now() - ctx.startedAt;
    // A response cut after its head still told the client its status.
    const status = this.headersSent ? this.statusCode : statusWithoutHead(this, req);
    metrics.requestFinished(ctx.environment, route, status, ms / 1e3);
    if (ctx.keyId !== undefined) {
      outcomes.record(ctx.keyId, status);
      requestLog?.record(ctx, req.method!, status, ms);
    }
    if (!logger.isLevelEnabled('info')) return;
    logger.info({
      requestId: ctx.requestId,
      environment: ctx.environment,
      method: req.method,
      route,
      // As the request log shows it: a key sent in the path redacted, the length bounded.
      path: recordedPath(ctx.prefix, ctx.apiPath, ''),
      status,
      keyId: ctx.keyId,
      ms,
    });
  }
  return function logRequestStep(req, res, next) {
    req.ctx.headers.set('X-Request-Id', req.ctx.requestId);
    res.on('close', requestEnded);
    next();
  };
}

/** A request whose response never began: refused on the socket by the parser (its body), or its client left. */
function statusWithoutHead(res: ServerResponse, req: GatewayRequest): number {
  const refusal = refusalOnSocket(res);
  if (refusal === undefined) return CLIENT_CLOSED_REQUEST;
  req.ctx.errorCode = refusal.code;
  return refusal.status;
}
