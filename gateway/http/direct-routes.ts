import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../../lib/api-error';
import { createErrorReporter, type ErrorReporter, type ErrorReporterOptions } from '../../lib/report-error';
import { requestIdOf } from '../../lib/request-id';
import { unsupportedExpectation } from './expect-continue';

/** Answers a request on its own Node request and response; a rejection or a throw becomes an Error body. */
export type DirectHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export type DirectAnswer = (req: IncomingMessage, res: ServerResponse) => void;

export interface DirectRoutes {
  /** The answer for a path (no query), matched as the Express routes before them were: in any case, with or without one trailing slash. */
  find(path: string): DirectAnswer | undefined;
}

const ALLOW = 'GET, HEAD, OPTIONS';

/**
 * The operator's paths (`/healthz`, `/readyz`, `/metrics`) on Node's own request and response,
 * never through Express: Express gives every request and response it handles a new prototype,
 * and Node's HTTP code, which the API shares, deoptimises on the new shapes, so a load balancer
 * probing every few seconds would keep every API request the dearer for it. Each path answers
 * GET and HEAD, OPTIONS with what it allows, any other method 405, and an `Expect` other than
 * 100-continue 417; every answer, Error bodies too, says `nosniff`.
 */
export function createDirectRoutes(handlers: Record<string, DirectHandler>, report: ErrorReporter<IncomingMessage>): DirectRoutes {
  const table = new Map<string, DirectAnswer>(
    Object.entries(handlers).map(([path, handler]) => [
      path.toLowerCase(),
      function answerDirectly(req: IncomingMessage, res: ServerResponse): void {
        res.setHeader('X-Content-Type-Options', 'nosniff');
        if (req.method === 'OPTIONS') return void res.writeHead(204, { Allow: ALLOW }).end();
        const refusal =
          req.method === 'GET' || req.method === 'HEAD'
            ? unsupportedExpectation(req)
            : new ApiError('method_not_allowed', `${req.method} is not allowed on ${path}.`, { headers: { Allow: ALLOW } });
        if (refusal) return void report(refusal, req, res);
        try {
          handler(req, res)?.catch((err: unknown) => report(err, req, res));
        } catch (err) {
          report(err, req, res);
        }
      },
    ]),
  );
  return {
    find: (path) => table.get((path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).toLowerCase()),
  };
}

/** A JSON answer for a program (a probe, a scraper), which no cache may keep. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), 'Cache-Control': 'no-store' });
  res.end(text);
}

/** How a direct route's failure is told: a 5xx as one line with the request id, which its answer echoes. */
export function directRouteReporter(logger: ErrorReporterOptions<IncomingMessage>['logger']): ErrorReporter<IncomingMessage> {
  return createErrorReporter({
    logger,
    message: 'request failed',
    describe: (req) => ({ requestId: requestIdOf(req), method: req.method, path: (req.url ?? '/').split('?', 1)[0]! }),
    echoRequestId: true,
  });
}
