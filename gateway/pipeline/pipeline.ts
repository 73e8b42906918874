import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Environment } from '../../openapi/environments';
import type { ApiOperation, RouteMatch } from '../../openapi/operations';
import type { CacheLookup } from '../cache/list-cache';
import type { ResponseHeaders } from '../http/response-headers';
import type { UpstreamCall } from '../upstream/upstream-call';

export type { Environment };

/** What the pipeline learns about a request as it goes; one object, created by the front handler. */
export interface RequestContext {
  readonly requestId: string;
  readonly environment: Environment;
  /** Public prefix of the environment, e.g. `/v1` or `/staging/v1`. */
  readonly prefix: string;
  /** Path below the prefix, e.g. `/pets/3`. */
  readonly apiPath: string;
  readonly search: string;
  /** `performance.now()` when the request reached the gateway. */
  readonly startedAt: number;
  /** What the steps add to the response, written in one call when it is sent. */
  readonly headers: ResponseHeaders;
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
  cacheLookup?: { key: string; result: CacheLookup | Promise<CacheLookup> };
  /** The validated body as forwarded upstream: the parsed value serialised again (validate-request.ts). */
  body?: Buffer;
  /**
   * Set by a step that must see the upstream's whole answer before the client does (the list
   * cache stores it; a create invalidates the cache first, for read-your-writes).
   */
  onUpstreamResponse?: (upstream: UpstreamResponse) => Promise<void>;
  /** Its answer will be stored for every key (a list-cache fill): the upstream learns no caller and no client header. */
  sharedFill: boolean;
  /** The request's one call to its upstream, once the proxy step has handed it off. */
  upstreamCall?: UpstreamCall;
}

export interface UpstreamResponse {
  status: number;
  /** What the client will be sent: hop-by-hop and origin-acting headers (Set-Cookie, …) already dropped. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** What the upstream sent, before anything was dropped: what it says about who the answer is for. */
  received: Readonly<Record<string, string | string[] | undefined>>;
  body: Buffer;
}

export interface GatewayRequest extends IncomingMessage {
  ctx: RequestContext;
}

export type Next = (err?: unknown) => void;

/**
 * Runs a step's `then` at once on a value, or when a promise settles. Steps use it for answers
 * that are usually in memory (a cached key, a leased budget) and only sometimes a round trip
 * away: the common case stays synchronous and allocates nothing (`then` is built once, with the
 * step, and gets the request passed in), and a returned promise is one the pipeline catches.
 */
export function whenReady<T>(
  value: T | Promise<T>,
  req: GatewayRequest,
  next: Next,
  then: (req: GatewayRequest, next: Next, value: T) => void | Promise<void>,
): void | Promise<void> {
  return value instanceof Promise ? value.then((settled) => then(req, next, settled)) : then(req, next, value);
}
/** Connect-style, so http-proxy-middleware and other middlewares plug in unchanged. */
export type Step = (req: GatewayRequest, res: ServerResponse, next: Next) => void | Promise<void>;

/**
 * Builds the pipeline once at start-up. Running it is a loop over an array: no router, and no
 * per-request allocation beyond the `next` closure (and a rejection handler for a step that
 * returns a promise).
 */
export function composePipeline(steps: readonly Step[], onError: (err: unknown, req: GatewayRequest, res: ServerResponse) => void) {
  return function runPipeline(req: GatewayRequest, res: ServerResponse): void {
    let index = 0;
    const next: Next = (err) => {
      if (err !== undefined) return onError(err, req, res);
      const step = steps[index++];
      if (!step) return onError(new Error('The gateway pipeline ended without a response.'), req, res);
      try {
        const result = step(req, res, next);
        if (result instanceof Promise) result.catch((reason: unknown) => failStep(next, reason));
      } catch (thrown) {
        failStep(next, thrown);
      }
    };
    next();
  };
}

/** A step that throws or rejects fails the request, even with `undefined`, which `next` would take for "go on". */
function failStep(next: Next, err: unknown): void {
  next(err ?? new Error(`A gateway pipeline step failed with ${String(err)}.`));
}
