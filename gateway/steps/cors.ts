import { ApiError } from '../../lib/api-error';
import type { Step } from '../pipeline/pipeline';

export interface CorsOptions {
  /** Exact origins (`scheme://host[:port]`) whose pages may call the API: the portal's PUBLIC_URL and the gateway's own. */
  allowedOrigins: readonly string[];
  /** Request headers a page may send: what Swagger UI's "Try it out" uses. */
  allowedHeaders?: readonly string[];
  /** Response headers a page may read. */
  exposedHeaders?: readonly string[];
  allowedMethods?: readonly string[];
  /** How long a browser may reuse a preflight answer. */
  maxAgeSeconds?: number;
}

export const DEFAULT_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'X-Request-Id'] as const;
export const DEFAULT_EXPOSED_HEADERS = [
  'Deprecation',
  'Sunset',
  'Link',
  'Location',
  'X-Request-Id',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
] as const;
export const DEFAULT_ALLOWED_METHODS = ['GET', 'HEAD', 'POST'] as const;

/** The origin of a URL, or null when it has none (`null`, opaque, malformed). */
export function originOf(url: string): string | null {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/**
 * CORS for the API prefixes, before authentication so that a browser's preflight (`OPTIONS`
 * with `Access-Control-Request-Method`) is answered without a key. Only the listed origins
 * get `Access-Control-Allow-Origin`; credentials are never allowed (the API takes bearer
 * keys, not cookies). A request without `Origin` — every non-browser client — costs one
 * header lookup.
 */
export function cors(options: CorsOptions): Step {
  const allowed = new Set<string>();
  for (const origin of options.allowedOrigins) {
    const normalized = originOf(origin);
    if (!normalized || normalized !== origin.replace(/\/+$/, '')) throw new Error(`cors: not an origin: ${origin}`);
    allowed.add(normalized);
  }
  if (allowed.size === 0) throw new Error('cors: allowedOrigins must not be empty');
  const maxAge = options.maxAgeSeconds ?? 600;
  if (!Number.isInteger(maxAge) || maxAge < 0) throw new Error('cors: maxAgeSeconds must be a non-negative integer');
  const allowHeaders = (options.allowedHeaders ?? DEFAULT_ALLOWED_HEADERS).join(', ');
  const allowedHeaderSet = new Set((options.allowedHeaders ?? DEFAULT_ALLOWED_HEADERS).map((h) => h.toLowerCase()));
  const methods = options.allowedMethods ?? DEFAULT_ALLOWED_METHODS;
  const allowMethods = methods.join(', ');
  const exposeHeaders = (options.exposedHeaders ?? DEFAULT_EXPOSED_HEADERS).join(', ');

  return function corsStep(req, res, next) {
    const origin = req.headers.origin;
    if (origin === undefined) return next();
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    const { headers } = req.ctx;
    headers.set('Vary', 'Origin');
    if (!allowed.has(origin)) {
      // Not for this origin's pages: say nothing, and the browser keeps the response from the page.
      if (preflight) return next(new ApiError('forbidden', `Browser requests from ${originOf(origin) ?? 'this origin'} are not allowed.`));
      return next();
    }
    headers.set('Access-Control-Allow-Origin', origin);
    if (!preflight) {
      headers.set('Access-Control-Expose-Headers', exposeHeaders);
      return next();
    }
    const method = String(req.headers['access-control-request-method']).toUpperCase();
    const requested = String(req.headers['access-control-request-headers'] ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean);
    const refused = requested.find((h) => !allowedHeaderSet.has(h));
    if (!methods.includes(method) || refused !== undefined) {
      const what = refused !== undefined ? `the header ${refused}` : `the method ${method}`;
      return next(new ApiError('forbidden', `Browser requests with ${what} are not allowed; allowed: ${allowMethods}; headers ${allowHeaders}.`));
    }
    headers.set('Vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
    headers.set('Access-Control-Allow-Methods', allowMethods);
    headers.set('Access-Control-Allow-Headers', allowHeaders);
    headers.set('Access-Control-Max-Age', String(maxAge));
    headers.writeHead(res, 204);
    res.end();
  };
}
