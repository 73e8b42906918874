import type { ServerResponse } from 'node:http';
import type { Logger } from '../../lib/logger';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { GatewayRequest, Step } from '../pipeline/pipeline';
import { recordedPath } from '../request-log/request-log';
import type { RequestLogWriter } from '../request-log/request-log-writer';

/** Counts each finished response of an authenticated key by day and outcome (identity's daily usage); must not block. */
export interface OutcomeRecorder {
  record(keyId: string, status: number): void;
}

/**
 * One structured line per API request when it finishes: request id, key id (never the key), route,
 * status, latency; and the same response counted in the metrics and, for a request with a key,
 * in its daily usage and its key's request log, from the same listener.
 */
export function logRequest(
  logger: Logger,
  metrics: Pick<GatewayMetrics, 'requestFinished'>,
  outcomes: OutcomeRecorder,
  requestLog?: Pick<RequestLogWriter, 'record'>,
): Step {
  // One listener function for every response (it finds its request through `res.req`): no closure per request.
  function requestFinished(this: ServerResponse): void {
    const req = this.req as GatewayRequest;
    const { ctx } = req;
    const route = ctx.operation?.operationId ?? 'unmatched';
    const ms = performance.now() - ctx.startedAt;
    metrics.requestFinished(ctx.environment, route, this.statusCode, ms / 1e3);
    if (ctx.keyId !== undefined) {
      outcomes.record(ctx.keyId, this.statusCode);
      requestLog?.record(ctx, req.method!, this.statusCode, ms);
    }
    if (!logger.isLevelEnabled('info')) return;
    logger.info({
      requestId: ctx.requestId,
      environment: ctx.environment,
      method: req.method,
      route,
      // As the request log shows it: a key sent in the path redacted, the length bounded.
      path: recordedPath(ctx.prefix, ctx.apiPath, ''),
      status: this.statusCode,
      keyId: ctx.keyId,
      ms,
    });
  }
  return function logRequestStep(req, res, next) {
    req.ctx.headers.set('X-Request-Id', req.ctx.requestId);
    res.on('finish', requestFinished);
    next();
  };
}
