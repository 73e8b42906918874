import { Agent as HttpAgent, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { ApiError, errorCodeFor, isErrorBodyFor } from '../../lib/api-error';
import { renderError } from '../../lib/render-error';
import type { GatewayMetrics, UpstreamOutcome } from '../metrics/gateway-metrics';
import type { GatewayRequest, Step } from '../pipeline';
import type { CircuitBreaker, CircuitPermit } from '../upstream/circuit-breaker';
import type { LinkRewriter } from '../upstream-links';

export interface ProxyOptions {
  upstreamUrl: string;
  /**
   * Sent as the upstream's bearer credential (an embedded store's token, or a remote upstream's
   * *_UPSTREAM_TOKEN; see petstore/gateway-token.ts). An upstream that answers 401 to it is
   * misconfigured, not the client: 502.
   */
  upstreamToken?: string;
  /** No response headers within this time → 504. */
  timeoutMs: number;
  links: LinkRewriter;
  /** Guards this upstream: while open, requests are answered 503 without contacting it. */
  breaker: CircuitBreaker;
  metrics: GatewayMetrics;
  onError: (err: unknown, req: GatewayRequest, res: ServerResponse) => void;
}

const TIMED_OUT = Symbol('upstreamTimedOut');
const CALL = Symbol('upstreamCall');
/** A step that buffers the upstream's answer (cache fill, create) never holds more than this. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'x-powered-by']);
/** The circuit permit and start time of the request's one upstream call. */
interface UpstreamCall {
  permit: CircuitPermit;
  startedAt: bigint;
}
type ProxiedRequest = GatewayRequest & { [TIMED_OUT]?: boolean; [CALL]?: UpstreamCall };

/**
 * One code path for every upstream (embedded store, staging, remote): http-proxy-middleware over
 * a keep-alive agent. Refused or broken connections become 502, silence becomes 504, and while
 * the circuit breaker is open the upstream is spared: 503 at once.
 */
export function proxyToUpstream({ upstreamUrl, upstreamToken, timeoutMs, links, breaker, metrics, onError }: ProxyOptions): { step: Step; close(): void } {
  const target = new URL(upstreamUrl);
  const upstreamAuthorization = upstreamToken === undefined ? undefined : `Bearer ${upstreamToken}`;
  const agentOptions = { keepAlive: true, maxSockets: 256, maxFreeSockets: 64, timeout: 30_000, scheduling: 'lifo' as const };
  const agent = target.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);

  /** Reports the call's outcome once to the breaker and the metrics; later reports of the same call are ignored. */
  const finishCall = (req: ProxiedRequest, outcome: UpstreamOutcome, verdict: 'succeeded' | 'failed') => {
    const call = req[CALL];
    if (!call) return;
    req[CALL] = undefined;
    call.permit[verdict]();
    metrics.upstreamFinished(req.ctx.environment, outcome, Number(process.hrtime.bigint() - call.startedAt) / 1e9);
  };

  const middleware = createProxyMiddleware<IncomingMessage, ServerResponse>({
    target: upstreamUrl,
    agent,
    changeOrigin: true,
    xfwd: true,
    // We write the response ourselves: headers rewritten, and buffered when a step must see it first.
    selfHandleResponse: true,
    on: {
      proxyReq(proxyReq: ClientRequest, incoming) {
        const req = incoming as ProxiedRequest;
        const { ctx } = req;
        // The client's key is for us; upstreams learn who called from our headers instead.
        proxyReq.removeHeader('authorization');
        if (upstreamAuthorization) proxyReq.setHeader('authorization', upstreamAuthorization);
        proxyReq.setHeader('x-request-id', ctx.requestId);
        if (ctx.keyId) proxyReq.setHeader('x-api-key-id', ctx.keyId);
        if (ctx.accountId) proxyReq.setHeader('x-consumer-id', ctx.accountId);
        if (ctx.body) {
          proxyReq.removeHeader('transfer-encoding');
          proxyReq.setHeader('content-length', ctx.body.length);
          proxyReq.write(ctx.body);
        }
        const timer = setTimeout(() => {
          req[TIMED_OUT] = true;
          proxyReq.destroy(new Error(`upstream sent no response within ${timeoutMs} ms`));
        }, timeoutMs);
        const clear = () => clearTimeout(timer);
        proxyReq.once('response', clear);
        proxyReq.once('close', clear);
      },
      proxyRes(proxyRes, incoming, res) {
        const req = incoming as ProxiedRequest;
        const status = proxyRes.statusCode ?? 502;
        finishCall(req, statusClass(status), UPSTREAM_DOWN_STATUSES.has(status) ? 'failed' : 'succeeded');
        if (status === 401 && upstreamAuthorization) {
          // The client's key was good; the upstream's 401 is about our credential, which the client cannot mend.
          proxyRes.resume();
          onError(new ApiError('bad_gateway', "The upstream refused the gateway's credential."), req, res);
          return;
        }
        const headers = responseHeaders(proxyRes, links);
        const hook = req.ctx.onUpstreamResponse;
        // Clients are promised an Error body with every error; an upstream that sends anything else is at fault.
        const errorToCheck = status >= 400 && req.method !== 'HEAD';
        if (!hook && !errorToCheck) {
          res.writeHead(status, headers);
          proxyRes.pipe(res);
          proxyRes.once('aborted', () => res.destroy());
          return;
        }
        readAll(proxyRes).then(
          async (body) => {
            try {
              await hook?.({ status, headers, body });
            } catch (err) {
              onError(err, req, res);
              return;
            }
            if (errorToCheck && !isErrorBodyFor(body.toString('utf8'), status)) {
              onError(withErrorBody(status, headers), req, res);
              return;
            }
            headers['content-length'] = String(body.length);
            res.writeHead(status, headers);
            res.end(body);
          },
          (err: unknown) => onError(new ApiError('bad_gateway', 'The upstream response was cut off.', { cause: err }), req, res),
        );
      },
      error(err, incoming, res) {
        const req = incoming as ProxiedRequest;
        const response = res as ServerResponse;
        if (response.destroyed || req.socket.destroyed) return; // the client went away: nobody to answer (the call is abandoned on close)
        finishCall(req, req[TIMED_OUT] ? 'timeout' : 'refused', 'failed');
        const apiError = req[TIMED_OUT]
          ? new ApiError('gateway_timeout', `The upstream did not answer within ${timeoutMs} ms.`, { cause: err })
          : new ApiError('bad_gateway', 'The upstream could not be reached or closed the connection.', { cause: err });
        onError(apiError, req, response);
      },
    },
  });

  return {
    step: function proxyStep(incoming, res, next) {
      const req = incoming as ProxiedRequest;
      // The upstream's answer is written through Node's header calls: the steps' headers go first, and its own win.
      req.ctx.headers.applyTo(res);
      const admission = breaker.admit();
      if (!admission.admitted) {
        metrics.upstreamFinished(req.ctx.environment, 'circuit_open', 0);
        // Rendered here, not through onError: the breaker logged the outage once; a line per refusal would flood the log.
        renderError(
          res,
          new ApiError('service_unavailable', `The upstream is unavailable; retry after ${admission.retryAfterSeconds} s.`, {
            headers: { 'Retry-After': String(admission.retryAfterSeconds) },
          }),
        );
        return;
      }
      const { permit } = admission;
      req[CALL] = { permit, startedAt: process.hrtime.bigint() };
      // A client that leaves before the upstream is judged says nothing about the upstream.
      res.once('close', () => permit.abandoned());
      // http-proxy appends req.url to the target's own path.
      req.url = req.ctx.apiPath + req.ctx.search;
      // The body is already read (and the client's 100-continue sent by Node). Forwarded, `Expect`
      // would make Node write the upstream request's headers as it is created, before proxyReq
      // could replace the client's key: the key would reach the upstream, and the body never follow.
      delete req.headers.expect;
      void middleware(req, res, next);
    },
    close: () => agent.destroy(),
  };
}

/** What a client reads an error status with; kept when the upstream's body is replaced. */
const ERROR_HEADERS = ['retry-after', 'allow', 'www-authenticate'];

/**
 * An upstream error without an Error body (an HTML page, nothing, JSON of another shape) is
 * given one: the same status when the contract has a code for it, so a 503's Retry-After still
 * means "come back", and 502 `bad_gateway` when it has none.
 */
function withErrorBody(status: number, headers: Record<string, string | string[]>): ApiError {
  const kept: Record<string, string> = {};
  for (const name of ERROR_HEADERS) {
    const value = headers[name];
    if (typeof value === 'string') kept[name] = value;
  }
  return new ApiError(errorCodeFor(status) ?? 'bad_gateway', `The upstream answered ${status} without an Error body.`, { headers: kept });
}

/** The upstream itself, or a proxy in front of it, says it cannot serve: counts against the circuit. */
const UPSTREAM_DOWN_STATUSES = new Set([502, 503, 504]);

function statusClass(status: number): UpstreamOutcome {
  if (status >= 500) return '5xx';
  if (status >= 400) return '4xx';
  if (status >= 300) return '3xx';
  return '2xx';
}

function responseHeaders(proxyRes: IncomingMessage, links: LinkRewriter): Record<string, string | string[]> {
  const connectionTokens = String(proxyRes.headers.connection ?? '')
    .toLowerCase()
    .split(',')
    .map((t) => t.trim());
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(proxyRes.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || connectionTokens.includes(name)) continue;
    out[name] = value;
  }
  if (typeof out.location === 'string') out.location = links.location(out.location);
  if (out.link) out.link = links.link(Array.isArray(out.link) ? out.link.join(', ') : out.link);
  return out;
}

function readAll(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BUFFERED_BYTES) {
        stream.destroy(new Error(`upstream response larger than ${MAX_BUFFERED_BYTES} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    stream.once('end', () => resolve(Buffer.concat(chunks, size)));
    stream.once('error', reject);
    stream.once('aborted', () => reject(new Error('upstream response aborted')));
  });
}
