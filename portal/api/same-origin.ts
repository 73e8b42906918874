import type { Request, RequestHandler } from 'express';
import { ApiError } from '../../lib/api-error';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function originOf(url: string): string | null {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/** The origin this request was addressed to, as the browser would write it (`<proto>://<Host>`). */
function requestOrigin(req: Request): string | null {
  const host = req.headers.host;
  return host ? originOf(`${req.protocol}://${host}`) : null;
}

/**
 * CSRF defence for cookie-authenticated, state-changing requests (anything but GET/HEAD/OPTIONS):
 * - `Origin` present: it must be the configured public origin or the origin the request was sent to;
 * - `Origin` absent: refuse when `Sec-Fetch-Site` says another site sent it;
 * - neither: allow (curl and other non-browser clients, which carry no ambient cookies).
 */
export function sameOriginOnly(options: { publicUrl: string }): RequestHandler {
  const publicOrigin = originOf(options.publicUrl);
  if (!publicOrigin) throw new Error(`sameOriginOnly: publicUrl is not an absolute URL: ${options.publicUrl}`);
  const refuse = () => new ApiError('forbidden', 'Cross-origin requests are not allowed; use the portal from its own origin.');

  return function sameOriginOnly(req, _res, next) {
    if (SAFE_METHODS.has(req.method)) return next();
    const origin = req.headers.origin;
    if (origin !== undefined) {
      const normalized = originOf(origin);
      return normalized !== null && (normalized === publicOrigin || normalized === requestOrigin(req)) ? next() : next(refuse());
    }
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return next(refuse());
    next();
  };
}
