import { Agent as HttpAgent, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Duplex } from 'node:stream';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { ApiError, errorBodyCode, errorCodeFor } from '../../lib/api-error';
import { quotedInMessage } from '../../lib/plain-text';
import type { ReportOptions } from '../../lib/report-error';
import type { GatewayMetrics, UpstreamOutcome } from '../metrics/gateway-metrics';
import type { GatewayRequest, Next, Step } from '../pipeline/pipeline';
import { createTurnEndWriter, type SendAtTurnEnd } from '../pipeline/turn-end-writer';
import type { CircuitBreaker } from '../upstream/circuit-breaker';
import type { UpstreamCall } from '../upstream/upstream-call';
import { connectionTokens, HOP_BY_HOP } from '../upstream/hop-by-hop';
import { createUpstreamRequestHeaders } from '../upstream/upstream-request-headers';
import type { LinkRewriter } from '../upstream/upstream-links';

export interface ProxyOptions {
  upstreamUrl: string;
  /**
   * Sent as the upstream's bearer credential (an embedded store's token, or a remote upstream's
   * *_UPSTREAM_TOKEN; see petstore/gateway-token.ts). An upstream that answers 401 to it is
   * misconfigured, not the client: 502.
   */
  upstreamToken?: string;
  /** No response headers, or no whole body of a small answer, within this time of the hand-off (waiting for a socket included) → 504. */
  timeoutMs: number;
  /** Connections to the upstream at most (256); further calls wait for one. */
  maxSockets?: number;
  /** Calls that may wait for a connection (1024); beyond them the client gets 503 at once. */
  maxQueue?: number;
  /** The gateway's public base URL, sent as the forwarded proto and host; unset, neither is sent. */
  publicUrl?: string;
  /** Behind a trusted load balancer: its X-Forwarded-For chain is passed on, extended (false). */
  trustProxy?: boolean;
  /** The client's address, sent as X-Real-IP (the socket's address). */
  clientIp?: (req: IncomingMessage) => string;
  links: LinkRewriter;
  /** Guards this upstream: while open, requests are answered 503 without contacting it. */
  breaker: CircuitBreaker;
  metrics: GatewayMetrics;
  /** Renders and logs a failed call; `quiet` renders without a line (see lib/report-error.ts). */
  onError: (err: unknown, req: GatewayRequest, res: ServerResponse, options?: ReportOptions) => void;
  /** Runs a task at the end of the turn, before its writes (turn-end.ts); `setImmediate` when absent. */
  beforeWrites?: (task: () => void) => void;
  /** Writes a response at the end of the turn (turn-end-writer.ts); one of its own, on `setImmediate`, when absent. */
  send?: SendAtTurnEnd;
}

/** A step that buffers the upstream's answer (cache fill, create) never holds more than this. */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
/** An upstream response header the client never sees: hop-by-hop, or one that would act on the gateway's own origin. */
const NOT_RETURNED = new Set<string>([
  ...HOP_BY_HOP,
  'x-powered-by',
  'server',
  // The portal's session lives on this origin: an upstream must not set, clear or redirect it.
  'set-cookie',
  'set-cookie2',
  'clear-site-data',
  'alt-svc',
]);
/** The transfer codings an upstream may use: chunked, which Node's client takes off, or none; the gateway sends no TE asking for another. */
const BODY_AS_SENT = /^\s*(?:chunked|identity)\s*$/i;
const BUSY_RETRY_AFTER_SECONDS = 1;
/** An answer of at most this many bytes, its length known, is read whole and sent by the turn-end writer; a larger one streams. */
const SMALL_ANSWER_BYTES = 64 * 1024;
const QUIETLY: ReportOptions = Object.freeze({ quiet: true });

/**
 * One code path for every upstream (embedded store, staging, remote): http-proxy-middleware over
 * a keep-alive agent, handed a request whose headers the gateway rebuilt first, so a call queued
 * for a socket has nothing left to change when it gets one; the timeout runs from the hand-off;
 * work beyond the sockets and a bounded queue is refused 503. Refused or broken connections
 * become 502, silence 504, and while the circuit breaker is open the upstream is spared: 503.
 *
 * The turn's calls are handed over together at its end, and small answers sent together at its
 * end (at once when no other request is in flight), for the reason turn-end-writer.ts gives: a
 * write wakes its reader, and a burst of writes after the turn's reads wakes each reader once; an
 * upstream on the gateway's core, woken by each call, took the core from the gateway in the
 * middle of its turn. Measured with wrk on a 2-core VM, the CPU of a miss and its fast upstream
 * fell from 168–218 to 89–105 µs (docs/benchmarks.md).
 */
export function proxyToUpstream({
  upstreamUrl,
  upstreamToken,
  timeoutMs,
  maxSockets = 256,
  maxQueue = 1024,
  publicUrl,
  trustProxy = false,
  clientIp = socketAddress,
  links,
  breaker,
  metrics,
  onError,
  beforeWrites = setImmediate,
  send = createTurnEndWriter(onError),
}: ProxyOptions): { step: Step; close(): void } {
  const target = new URL(upstreamUrl);
  const agentOptions = { keepAlive: true, maxSockets, maxFreeSockets: Math.min(64, maxSockets), timeout: 30_000, scheduling: 'lifo' as const };
  const agent = target.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  const upstreamHeaders = createUpstreamRequestHeaders({ upstreamHost: target.host, publicUrl, trustProxy, clientIp, upstreamToken });
  const maxInFlight = maxSockets + maxQueue;
  let inFlight = 0;

  /** Reports the call's outcome once to the breaker and the metrics; a call with an outcome has no timeout left to run. */
  const report = (call: UpstreamCall, outcome: UpstreamOutcome, verdict: 'succeeded' | 'failed') => {
    if (call.reported) return;
    call.reported = true;
    clearTimeout(call.timer);
    call.permit[verdict]();
    metrics.upstreamFinished(call.req.ctx.environment, outcome, (performance.now() - call.startedAt) / 1e3);
  };

  const timedOut = (call: UpstreamCall) => {
    call.timer = undefined;
    if (call.reported) return;
    report(call, 'timeout', 'failed');
    // A call still queued for a socket hears of its destruction only when it gets one: answer now.
    call.upstream?.destroy(new Error(`upstream sent no response within ${timeoutMs} ms`));
    if (!call.res.destroyed) onError(new ApiError('gateway_timeout', `The upstream did not answer within ${timeoutMs} ms.`), call.req, call.res);
  };

  const failed = (call: UpstreamCall, err: Error) => {
    clearTimeout(call.timer);
    if (call.reported) return; // timed out already, or the response had begun
    const { req, res } = call;
    if (res.destroyed || req.socket.destroyed) return; // the client went away: nobody to answer (the call is abandoned on close)
    report(call, 'refused', 'failed');
    onError(new ApiError('bad_gateway', 'The upstream could not be reached or closed the connection.', { cause: err }), req, res);
  };

  const responded = (call: UpstreamCall, proxyRes: IncomingMessage) => {
    const { req, res } = call;
    if (call.reported) {
      proxyRes.resume();
      return;
    }
    const status = proxyRes.statusCode ?? 502;
    if (status < 200 || status > 599) {
      // Node parses any three digits, but writeHead would throw on them: a broken upstream, not a crash.
      proxyRes.resume();
      report(call, 'refused', 'failed');
      onError(new ApiError('bad_gateway', `The upstream answered with status ${status}, which HTTP does not define.`), req, res);
      return;
    }
    const coding = proxyRes.headers['transfer-encoding'];
    if (coding !== undefined && coding !== 'chunked' && !BODY_AS_SENT.test(coding) && hasBody(req.method, status)) {
      // Node's client takes off the chunked coding only: any other would reach the client as the body's bytes.
      proxyRes.resume();
      report(call, 'refused', 'failed');
      const message = `The upstream answered with "Transfer-Encoding: ${quotedInMessage(coding)}", a coding the gateway did not ask for and does not decode.`;
      onError(new ApiError('bad_gateway', message), req, res);
      return;
    }
    const outcome = statusClass(status);
    const verdict = UPSTREAM_DOWN_STATUSES.has(status) ? 'failed' : 'succeeded';
    if (status === 401 && upstreamToken !== undefined) {
      // The client's key was good; the upstream's 401 is about our credential, which the client cannot mend.
      proxyRes.resume();
      report(call, outcome, verdict);
      onError(new ApiError('bad_gateway', "The upstream refused the gateway's credential."), req, res);
      return;
    }
    const headers = responseHeaders(proxyRes, links);
    const hook = req.ctx.onUpstreamResponse;
    // Clients are promised an Error body with every error; an upstream that sends anything else is at fault.
    const errorToCheck = status >= 400 && req.method !== 'HEAD';
    if (!hook && !errorToCheck && !(Number(proxyRes.headers['content-length']) <= SMALL_ANSWER_BYTES)) {
      report(call, outcome, verdict);
      req.ctx.headers.writeHeadWith(res, status, headers);
      proxyRes.pipe(res);
      proxyRes.once('aborted', () => res.destroy());
      return;
    }
    // Nothing has been written yet: the timeout runs on until the body is whole, and can still be a 504.
    readBody(proxyRes, (err, body) => {
      if (call.reported) return; // timed out, or failed: answered already
      if (err !== undefined) {
        if (res.destroyed) return; // its client left and cut the call, its timer cleared (clientClosed): nobody to answer
        report(call, 'refused', 'failed');
        return onError(new ApiError('bad_gateway', 'The upstream response was cut off.', { cause: err }), req, res);
      }
      report(call, outcome, verdict);
      if (hook === undefined) return answer(call, status, headers, body, errorToCheck);
      hook({ status, headers, received: proxyRes.headers, body }).then(
        () => answer(call, status, headers, body, errorToCheck),
        (hookErr: unknown) => onError(hookErr, req, res),
      );
    });
  };

  /** A whole answer: an upstream error without an Error body is replaced; the rest goes to the turn-end writer. */
  const answer = (call: UpstreamCall, status: number, headers: Record<string, string | string[]>, body: Buffer, errorToCheck: boolean) => {
    const { req, res } = call;
    if (errorToCheck) {
      const code = errorBodyCode(body.toString('utf8'), status);
      if (code === undefined) return onError(withErrorBody(status, headers), req, res);
      req.ctx.errorCode = code; // the upstream's own Error, for the request log
    }
    if (hasBody(req.method, status)) headers['content-length'] = String(body.length);
    send(res, status, req.ctx.headers, body, headers);
  };

  const middleware = createProxyMiddleware<IncomingMessage, ServerResponse>({
    // Parsed once here: given the URL as a string, http-proxy parses it again for every request.
    target: proxyTarget(target),
    // req.url is already the upstream path (origin form, set by the step): taken as is, not parsed again.
    toProxy: true,
    agent,
    // Host, credentials and forwarding headers are in the rebuilt headers already.
    changeOrigin: false,
    xfwd: false,
    // We write the response ourselves: headers rewritten, and buffered when a step must see it first.
    selfHandleResponse: true,
    // The default plugins log, debug and answer errors per request; the gateway does all three itself.
    ejectPlugins: true,
    plugins: [
      (proxyServer) => {
        proxyServer.on('proxyRes', (proxyRes, req) => responded((req as GatewayRequest).ctx.upstreamCall!, proxyRes));
        proxyServer.on('error', (err, req) => failed((req as GatewayRequest).ctx.upstreamCall!, err));
      },
    ],
  });

  // call, next, call, next…: the turn's hand-offs, in one flat list.
  const handOffs: Array<UpstreamCall | Next> = [];
  // http-proxy-middleware sends each call after a promise hop: once the turn's responses are written.
  const handOffAll = () => {
    try {
      for (let i = 0; i < handOffs.length; i += 2) {
        const call = handOffs[i] as UpstreamCall;
        // Timed out, or its client left, while it waited for the turn's end: nothing to send.
        if (!call.reported && !call.res.destroyed) void middleware(call.req, call.res, handOffs[i + 1] as Next);
      }
    } finally {
      handOffs.length = 0; // emptied whatever happens, or no hand-off would be scheduled again
    }
  };

  const upstreamClosed = () => {
    inFlight--;
  };

  /**
   * http-proxy streams the client request into the upstream one; the body was read and validated
   * already, so the validated bytes are sent instead, and the call learns its upstream request.
   */
  function sendValidatedBody(this: GatewayRequest, upstream: ClientRequest): ClientRequest {
    const call = this.ctx.upstreamCall!;
    call.upstream = upstream;
    inFlight++;
    upstream.once('close', upstreamClosed);
    upstream.on('upgrade', switchedProtocols); // on, not once: no wrapper per call, and a 101 ends the request
    if (call.reported) upstream.destroy(); // timed out before http-proxy got this far
    else upstream.end(this.ctx.body);
    return upstream;
  }

  /**
   * A 503 without contacting the upstream, counted in the metrics but not logged: the breaker
   * logged the outage once, and a line per refusal would flood the log when it matters most.
   */
  const shed = (req: GatewayRequest, res: ServerResponse, outcome: 'saturated' | 'circuit_open', state: string, retryAfterSeconds: number): void => {
    metrics.upstreamFinished(req.ctx.environment, outcome, 0);
    const headers = { 'Retry-After': String(retryAfterSeconds) };
    onError(new ApiError('service_unavailable', `The upstream is ${state}; retry after ${retryAfterSeconds} s.`, { headers }), req, res, QUIETLY);
  };

  return {
    step: function proxyStep(req, res, next) {
      // Calls still waiting for the turn's end count too: a burst arrives within one turn.
      if (inFlight + handOffs.length / 2 >= maxInFlight) return shed(req, res, 'saturated', 'busy', BUSY_RETRY_AFTER_SECONDS);
      const admission = breaker.admit();
      if (!admission.admitted) return shed(req, res, 'circuit_open', 'unavailable', admission.retryAfterSeconds);
      const { ctx } = req;
      const call: UpstreamCall = { req, res, permit: admission.permit, startedAt: performance.now(), upstream: undefined, timer: undefined, reported: false };
      ctx.upstreamCall = call;
      // Decided before anything is written: http-proxy copies these into the upstream request.
      req.headers = upstreamHeaders(req, ctx, ctx.body) as IncomingHttpHeaders;
      // http-proxy appends req.url to the target's own path.
      req.url = ctx.apiPath + (ctx.upstreamSearch ?? ctx.search);
      req.pipe = sendValidatedBody as typeof req.pipe;
      // The timeout runs from the hand-off, so a call waiting for a socket is bounded too.
      call.timer = setTimeout(timedOut, timeoutMs, call);
      res.once('close', clientClosed);
      if (handOffs.length === 0) beforeWrites(handOffAll);
      handOffs.push(call, next);
    },
    close: () => agent.destroy(),
  };
}

/** A response's 'close': when the client left first, its call says nothing about the upstream, and holds a socket for nobody. */
function clientClosed(this: ServerResponse): void {
  if (this.writableFinished) return;
  const call = (this.req as GatewayRequest).ctx.upstreamCall!;
  clearTimeout(call.timer);
  call.permit.abandoned();
  call.upstream?.destroy();
}

/**
 * A 101 to a request that asked for no upgrade (the gateway never does). Node hands the socket to
 * an 'upgrade' listener, and without one closes it without an error, leaving the call to wait
 * for its timeout: the socket is closed here and the call fails through http-proxy's error path.
 */
function switchedProtocols(this: ClientRequest, _res: IncomingMessage, socket: Duplex): void {
  socket.destroy();
  this.emit('error', new Error('upstream switched protocols unasked'));
}

/** A HEAD, 204 or 304 answer has no body, whatever length or coding it names. */
function hasBody(method: string | undefined, status: number): boolean {
  return method !== 'HEAD' && status !== 204 && status !== 304;
}

function socketAddress(req: IncomingMessage): string {
  return req.socket.remoteAddress ?? 'unknown';
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

/** The upstream URL as http-proxy's options take it (url.parse's shape), so it is not parsed per request. */
function proxyTarget(url: URL) {
  // WHATWG keeps an IPv6 host's brackets; a socket's hostname has none.
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { protocol: url.protocol, host: url.host, hostname, port: url.port, path: url.pathname === '/' ? '' : url.pathname };
}

function responseHeaders(proxyRes: IncomingMessage, links: LinkRewriter): Record<string, string | string[]> {
  const received = proxyRes.headers;
  const named = connectionTokens(received.connection);
  const out: Record<string, string | string[]> = {};
  // for-in, not Object.entries: no array of pairs per response.
  for (const name in received) {
    const value = received[name];
    // CORS is the gateway's decision (cors.ts): an upstream's Access-Control-* would widen it.
    if (value === undefined || NOT_RETURNED.has(name) || name.startsWith('access-control-') || named?.has(name)) continue;
    out[name] = value;
  }
  if (typeof out.location === 'string') out.location = links.location(out.location);
  if (out.link) out.link = links.link(Array.isArray(out.link) ? out.link.join(', ') : out.link);
  // A 204 must not name a length (RFC 9110, 8.6); a 304's names its representation's, and stays.
  if (proxyRes.statusCode === 204) delete out['content-length'];
  return out;
}

const NO_BODY = Buffer.alloc(0);

/** The whole body (at most MAX_BUFFERED_BYTES), or why it could not be had; `done` is called once. */
function readBody(stream: IncomingMessage, done: (err: Error | undefined, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  const settle = (err: Error | undefined, body: Buffer) => {
    if (settled) return;
    settled = true;
    done(err, body);
  };
  stream.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_BUFFERED_BYTES) {
      stream.destroy(new Error(`upstream response larger than ${MAX_BUFFERED_BYTES} bytes`));
      return;
    }
    chunks.push(chunk);
  });
  stream.once('end', () => settle(undefined, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
  stream.once('error', (err) => settle(err, NO_BODY));
  // Heard at once, as the body is destroyed: its error comes a tick later, after the upstream request's own.
  stream.once('aborted', () => settle(new Error('upstream response aborted'), NO_BODY));
}
