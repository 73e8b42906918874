import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorCode } from '../../lib/api-error';
import type { Environment } from '../../openapi/environments';
import type { ApiOperation, RouteMatch } from '../../openapi/operations';
import type { CacheLookup } from '../cache/list-cache';
import type { ResponseHeaders } from '../http/response-headers';
import type { UpstreamCall } from '../upstream/upstream-call';

export type { Environment };

/** The list cache's answer to a request (`X-Cache`). */
export type CacheStatus = 'HIT' | 'MISS';

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
  /** The account's plan, by name: its limits come from the plan book (rate-limit step). */
  plan?: string;
  /** Validated query with defaults applied. */
  query?: Readonly<Record<string, unknown>>;
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
  /** The query string the upstream is asked when it is not the client's: a fill's is the one its key names (list-cache.ts). */
  upstreamSearch?: string;
  /** The request's one call to its upstream, once the proxy step has handed it off. */
  upstreamCall?: UpstreamCall;
  /** The code of the Error body the client was sent, by the gateway or the upstream (for the request log). */
  errorCode?: ErrorCode;
  /** The list cache's answer (`X-Cache`); undefined where the cache does not serve. */
  cacheStatus?: CacheStatus;
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
 * A request whose connection closed while the answer was awaited goes no further: it is neither
 * counted for a key nor sent upstream, and its close was logged already (log-request.ts).
 */
export function whenReady<T>(
  value: T | Promise<T>,
  req: GatewayRequest,
  next: Next,
  then: (req: GatewayRequest, next: Next, value: T) => void | Promise<void>,
): void | Promise<void> {
  return value instanceof Promise ? value.then((settled) => (req.socket.destroyed ? undefined : then(req, next, settled))) : then(req, next, value);
}
/** Connect-style, so http-proxy-middleware and other middlewares plug in unchanged. */
export type Step = (req: GatewayRequest, res: ServerResponse, next: Next) => void | Promise<void>;

type PipelineErrorHandler = (err: unknown, req: GatewayRequest, res: ServerResponse) => void;

/** One request's walk along the steps. */
interface PipelineRun {
  readonly steps: readonly Step[];
  readonly onError: PipelineErrorHandler;
  readonly req: GatewayRequest;
  readonly res: ServerResponse;
  /** The last step started: a `next` from a step before it is that step's second. */
  reached: number;
}

/**
 * Builds the pipeline once at start-up. Running it is a loop over an array: no router, and no
 * per-request allocation beyond the run's state and one `next` per step reached (and a rejection
 * handler for a step that returns a promise).
 */
export function composePipeline(steps: readonly Step[], onError: PipelineErrorHandler) {
  return function runPipeline(req: GatewayRequest, res: ServerResponse): void {
    startStep({ steps, onError, req, res, reached: -1 }, 0);
  };
}

function startStep(run: PipelineRun, index: number): void {
  run.reached = index;
  const step = run.steps[index];
  if (!step) return run.onError(new Error('The gateway pipeline ended without a response.'), run.req, run.res);
  try {
    // Anonymous on purpose: tsx keeps names, and naming a function made per request costs a defineProperty.
    const result = step(run.req, run.res, (err) => goOn(run, index, err));
    if (result instanceof Promise) result.catch((reason: unknown) => failStep(run, reason));
  } catch (thrown) {
    failStep(run, thrown);
  }
}

function goOn(run: PipelineRun, index: number, err: unknown): void {
  // Hono's compose guard: a step that goes on twice is a bug, which a silently skipped step would hide.
  if (run.reached > index) {
    return run.onError(new Error(`next() called multiple times by the pipeline step ${run.steps[index]!.name || index}.`, { cause: err }), run.req, run.res);
  }
  if (err === undefined) return startStep(run, index + 1);
  run.reached = index + 1; // a later call from this step is a second one too
  run.onError(err, run.req, run.res);
}

/**
 * A step that throws or rejects fails the request, even with `undefined`, which `next` would take
 * for "go on"; straight to the handler, since the step may have called `next` already.
 */
function failStep(run: PipelineRun, err: unknown): void {
  run.onError(err ?? new Error(`A gateway pipeline step failed with ${String(err)}.`), run.req, run.res);
}
