import type { Step } from '../pipeline/pipeline';

export interface DeprecationOptions {
  /** Absolute URL of the human-readable deprecation notice. */
  noticeUrl: string;
}

/**
 * RFC 9745 `Deprecation`, RFC 8594 `Sunset` and `Link rel="deprecation"` on every response of a
 * deprecated operation — set before authentication so even a 401 tells the caller to migrate.
 * Values come from the OpenAPI document (`x-deprecated-at`, `x-sunset`), formatted once when it is compiled.
 */
export function deprecationHeaders({ noticeUrl }: DeprecationOptions): Step {
  const link = `<${noticeUrl}>; rel="deprecation"; type="text/html"`;
  return function deprecationHeadersStep(req, _res, next) {
    const { operation: op, headers } = req.ctx;
    if (op?.deprecated) {
      if (op.deprecationHeader) headers.set('Deprecation', op.deprecationHeader);
      if (op.sunsetHeader) headers.set('Sunset', op.sunsetHeader);
      headers.set('Link', link);
    }
    next();
  };
}
