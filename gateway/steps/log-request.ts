import type { Logger } from '../../lib/logger';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import type { Step } from '../pipeline';

/**
 * One structured line per API request when it finishes: request id, key id (never the key), route,
 * status, latency; and the same response counted in the metrics, from the same listener.
 */
export function logRequest(logger: Logger, metrics: Pick<GatewayMetrics, 'requestFinished'>): Step {
  return function logRequestStep(req, res, next) {
    res.setHeader('X-Request-Id', req.ctx.requestId);
    res.once('finish', () => {
      const { ctx } = req;
      const route = ctx.operation?.operationId ?? 'unmatched';
      const seconds = Number(process.hrtime.bigint() - ctx.startedAt) / 1e9;
      metrics.requestFinished(ctx.environment, route, res.statusCode, seconds);
      logger.info({
        requestId: ctx.requestId,
        environment: ctx.environment,
        method: req.method,
        route,
        path: ctx.prefix + ctx.apiPath,
        status: res.statusCode,
        keyId: ctx.keyId,
        ms: seconds * 1e3,
      });
    });
    next();
  };
}
