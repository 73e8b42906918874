import type { ServerResponse } from 'node:http';
import type { Logger } from '../../lib/logger';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { GatewayRequest, Step } from '../pipeline/pipeline';

/**
 * One structured line per API request when it finishes: request id, key id (never the key), route,
 * status, latency; and the same response counted in the metrics, from the same listener.
 */
export function logRequest(logger: Logger, metrics: Pick<GatewayMetrics, 'requestFinished'>): Step {
  // One listener function for every response (it finds its request through `res.req`): no closure per request.
  function requestFinished(this: ServerResponse): void {
    const req = this.req as GatewayRequest;
    const { ctx } = req;
    const route = ctx.operation?.operationId ?? 'unmatched';
    const ms = performance.now() - ctx.startedAt;
    metrics.requestFinished(ctx.environment, route, this.statusCode, ms / 1e3);
    if (!logger.isLevelEnabled('info')) return;
    logger.info({
      requestId: ctx.requestId,
      environment: ctx.environment,
      method: req.method,
      route,
      path: ctx.prefix + ctx.apiPath,
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
