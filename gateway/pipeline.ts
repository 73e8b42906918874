import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ApiOperation, RouteMatch } from '../openapi/operations';
import type { CacheLookup } from './cache/list-cache';

export type Environment = 'production' | 'staging';

/** What the pipeline learns about a request as it goes; one object, created by the front handler. */
export interface RequestContext {
  readonly requestId: string;
  readonly environment: Environment;
  /** Public prefix of the environment, e.g. `/v1` or `/staging/v1`. */
  readonly prefix: string;
  /** Path below the prefix, e.g. `/pets/3`. */
  readonly apiPath: string;
  readonly search: string;
  readonly startedAt: bigint;
  route?: RouteMatch;
  operation?: ApiOperation;
  keyId?: string;
  accountId?: string;
  /** Validated query with defaults applied. */
  query?: Record<string, unknown>;
  /**
   * A list-cache read started before the rate limiter's command, so both leave in one Redis
   * write and come back together; used only once every refusal has been ruled out.
   */
  cacheLookup?: { key: string; result: Promise<CacheLookup> };
  /** Raw body bytes, read and validated before the upstream is touched. */
  body?: Buffer;
  /**
   * Set by a step that must see the upstream's whole answer before the client does (the list
   * cache stores it; a create invalidates the cache first, for read-your-writes).
   */
  onUpstreamResponse?: (upstream: UpstreamResponse) => Promise<void>;
}

export interface UpstreamResponse {
  status: number;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: Buffer;
}

export interface GatewayRequest extends IncomingMessage {
  ctx: RequestContext;
}

export type Next = (err?: unknown) => void;
/** Connect-style, so http-proxy-middleware and other middlewares plug in unchanged. */
export type Step = (req: GatewayRequest, res: ServerResponse, next: Next) => void | Promise<void>;

/**
 * Builds the pipeline once at start-up. Running it is a loop over an array: no router,
 * no per-request allocation beyond the `next` and `fail` closures.
 */
export function composePipeline(steps: readonly Step[], onError: (err: unknown, req: GatewayRequest, res: ServerResponse) => void) {
  return function runPipeline(req: GatewayRequest, res: ServerResponse): void {
    let index = 0;
    // A step that throws or rejects fails the request even with `undefined`, which `next` would take for "go on".
    const fail = (err: unknown) => next(err ?? new Error(`A gateway pipeline step failed with ${String(err)}.`));
    const next: Next = (err) => {
      if (err !== undefined) return onError(err, req, res);
      const step = steps[index++];
      if (!step) return onError(new Error('The gateway pipeline ended without a response.'), req, res);
      try {
        const result = step(req, res, next);
        if (result && typeof (result as Promise<void>).catch === 'function') (result as Promise<void>).catch(fail);
      } catch (err) {
        fail(err);
      }
    };
    next();
  };
}
