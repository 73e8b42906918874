import helmet from 'helmet';
import type { RequestHandler } from 'express';

export interface SecurityHeadersOptions {
  /** PUBLIC_URL: https turns on HSTS and upgrade-insecure-requests. */
  publicUrl: string;
}

/**
 * The Content-Security-Policy of the portal and the docs: scripts and styles only from this
 * origin (no inline code at all), images also as data: URIs (Swagger UI's icons), requests
 * only back to this origin (Swagger UI's "Try it out" calls the relative /v1 and /staging/v1
 * servers), and no framing.
 */
export function contentSecurityPolicy(publicUrl: string): Record<string, string[]> {
  const directives: Record<string, string[]> = {
    'default-src': ["'self'"],
    'base-uri': ["'self'"],
    'connect-src': ["'self'"],
    'font-src': ["'self'", 'data:'],
    'form-action': ["'self'"],
    'frame-ancestors': ["'none'"],
    'img-src': ["'self'", 'data:'],
    'manifest-src': ["'self'"],
    'object-src': ["'none'"],
    'script-src': ["'self'"],
    'script-src-attr': ["'none'"],
    'style-src': ["'self'"],
    'worker-src': ["'self'"],
  };
  if (isHttps(publicUrl)) directives['upgrade-insecure-requests'] = [];
  return directives;
}

function isHttps(publicUrl: string): boolean {
  return new URL(publicUrl).protocol === 'https:';
}

/**
 * helmet for the Express side of the gateway (portal pages, docs, portal API). The API prefixes
 * and the operator's paths never pass through here: their responses are for programs, and the
 * hot path stays free of per-request header work.
 */
export function securityHeaders({ publicUrl }: SecurityHeadersOptions): RequestHandler {
  const https = isHttps(publicUrl);
  const headers = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: contentSecurityPolicy(publicUrl) },
    strictTransportSecurity: https ? { maxAge: 31_536_000, includeSubDomains: false } : false,
    xFrameOptions: { action: 'deny' },
    referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
    crossOriginOpenerPolicy: { policy: 'same-origin' },
    crossOriginResourcePolicy: { policy: 'same-origin' },
  });
  return function securityHeaders(req, res, next) {
    headers(req, res, next);
  };
}
