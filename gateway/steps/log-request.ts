import type { Logger } from '../../lib/logger';
import type { Step } from '../pipeline';

/** One structured line per API request when it finishes: request id, key id (never the key), route, status, latency. */
export function logRequest(logger: Logger): Step {
  return function logRequestStep(req, res, next) {
    res.setHeader('X-Request-Id', req.ctx.requestId);
    res.once('finish', () => {
      const { ctx } = req;
      logger.info({
        requestId: ctx.requestId,
        environment: ctx.environment,
        method: req.method,
        route: ctx.operation?.operationId ?? 'unmatched',
        path: ctx.prefix + ctx.apiPath,
        status: res.statusCode,
        keyId: ctx.keyId,
        ms: Number(process.hrtime.bigint() - ctx.startedAt) / 1e6,
      });
    });
    next();
  };
}
