import { Agent as HttpAgent, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { ApiError } from '../../lib/api-error';
import type { GatewayRequest, Step } from '../pipeline';
import type { LinkRewriter } from '../upstream-links';

export interface ProxyOptions {
  upstreamUrl: string;
  /** No response headers within this time → 504. */
  timeoutMs: number;
  links: LinkRewriter;
  onError: (err: unknown, req: GatewayRequest, res: ServerResponse) => void;
}

const TIMED_OUT = Symbol('upstreamTimedOut');
type ProxiedRequest = GatewayRequest & { [TIMED_OUT]?: boolean };

/**
 * One code path for every upstream (embedded store, staging, remote): http-proxy-middleware over
 * a keep-alive agent. Refused or broken connections become 502, silence becomes 504.
 */
export function proxyToUpstream({ upstreamUrl, timeoutMs, links, onError }: ProxyOptions): { step: Step; close(): void } {
  const target = new URL(upstreamUrl);
  const agentOptions = { keepAlive: true, maxSockets: 256, maxFreeSockets: 64, timeout: 30_000, scheduling: 'lifo' as const };
  const agent = target.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);

  const middleware = createProxyMiddleware<IncomingMessage, ServerResponse>({
    target: upstreamUrl,
    agent,
    changeOrigin: true,
    xfwd: true,
    on: {
      proxyReq(proxyReq: ClientRequest, incoming) {
        const req = incoming as ProxiedRequest;
        const { ctx } = req;
        // The client's key is for us; upstreams learn who called from our headers instead.
        proxyReq.removeHeader('authorization');
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
      proxyRes(proxyRes) {
        const location = proxyRes.headers.location;
        if (location) proxyRes.headers.location = links.location(location);
        const link = proxyRes.headers.link;
        if (link) proxyRes.headers.link = links.link(Array.isArray(link) ? link.join(', ') : link);
        delete proxyRes.headers['x-powered-by'];
      },
      error(err, incoming, res) {
        const req = incoming as ProxiedRequest;
        const response = res as ServerResponse;
        if (response.destroyed || req.socket.destroyed) return; // the client went away: nobody to answer
        const apiError = req[TIMED_OUT]
          ? new ApiError('gateway_timeout', `The upstream did not answer within ${timeoutMs} ms.`, { cause: err })
          : new ApiError('bad_gateway', 'The upstream could not be reached or closed the connection.', { cause: err });
        onError(apiError, req, response);
      },
    },
  });

  return {
    step: function proxyStep(req, res, next) {
      // http-proxy appends req.url to the target's own path.
      req.url = req.ctx.apiPath + req.ctx.search;
      void middleware(req, res, next);
    },
    close: () => agent.destroy(),
  };
}
