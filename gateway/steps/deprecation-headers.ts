import type { Step } from '../pipeline';

export interface DeprecationOptions {
  /** Absolute URL of the human-readable deprecation notice. */
  noticeUrl: string;
}

/**
 * RFC 9745 `Deprecation`, RFC 8594 `Sunset` and `Link rel="deprecation"` on every response of a
 * deprecated operation — set before authentication so even a 401 tells the caller to migrate.
 * Dates come from the OpenAPI document (`x-deprecated-at`, `x-sunset`).
 */
export function deprecationHeaders({ noticeUrl }: DeprecationOptions): Step {
  const link = `<${noticeUrl}>; rel="deprecation"; type="text/html"`;
  return function deprecationHeadersStep(req, res, next) {
    const op = req.ctx.operation;
    if (op?.deprecated) {
      if (op.deprecatedAt) res.setHeader('Deprecation', `@${Math.floor(op.deprecatedAt.getTime() / 1000)}`);
      if (op.sunset) res.setHeader('Sunset', op.sunset.toUTCString());
      res.setHeader('Link', link);
    }
    next();
  };
}
