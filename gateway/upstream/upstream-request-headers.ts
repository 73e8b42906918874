import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';
import { normalizeAddress } from '../http/client-ip';
import { connectionTokens, HOP_BY_HOP } from './hop-by-hop';

export interface UpstreamRequestHeaderOptions {
  /** `host[:port]` of the upstream, sent as its Host. */
  upstreamHost: string;
  /** What the gateway is called from outside: the only source of the forwarded proto and host (unset: neither is sent). */
  publicUrl?: string;
  /** With it, the X-Forwarded-For chain the load balancer sent is kept and extended; without it, dropped. */
  trustProxy: boolean;
  /** The client address as the gateway computed it (client-ip.ts), sent as X-Real-IP. */
  clientIp: (req: IncomingMessage) => string;
  /** The upstream's own bearer credential; the client's never goes upstream. */
  upstreamToken?: string;
}

/** Who is calling, as the pipeline established it; undefined fields are not sent. */
export interface UpstreamIdentity {
  requestId: string;
  keyId?: string;
  accountId?: string;
  /** The answer will be replayed to every key (a list-cache fill): the upstream is asked as no one in particular. */
  sharedFill?: boolean;
}

/**
 * Client headers that never reach an upstream: hop-by-hop headers, credentials, headers that
 * name a client address or rewrite the method or URL (frameworks behind us honour them), the
 * identity and forwarding headers the gateway writes itself, and digests of a body whose
 * framing the gateway writes itself.
 */
const NEVER_FORWARDED = new Set<string>([
  ...HOP_BY_HOP,
  'authorization',
  'cookie',
  'forwarded',
  'x-real-ip',
  'x-original-forwarded-for',
  'x-originating-ip',
  'x-remote-ip',
  'x-remote-addr',
  'client-ip',
  'x-host',
  'x-original-host',
  'via',
  'x-client-ip',
  'true-client-ip',
  'x-cluster-client-ip',
  'cf-connecting-ip',
  'fastly-client-ip',
  'x-http-method-override',
  'x-http-method',
  'x-method-override',
  'x-original-url',
  'x-rewrite-url',
  'x-request-id',
  'x-api-key-id',
  'x-consumer-id',
  'host',
  'expect',
  'digest',
  'repr-digest',
]);

/**
 * Builds the upstream request's headers from scratch, as nginx's `proxy_set_header` discipline
 * does: end-to-end client headers are kept unless listed above, every `X-Forwarded*` and
 * `content-*` header is dropped, and whatever the client's `Connection` names goes too; then
 * the gateway writes Host, its own credential, identity, and forwarding headers from what it trusts.
 */
export function createUpstreamRequestHeaders(o: UpstreamRequestHeaderOptions) {
  const publicUrl = o.publicUrl === undefined ? undefined : new URL(o.publicUrl);
  const proto = publicUrl?.protocol.slice(0, -1);
  const host = publicUrl?.host;
  // RFC 7239: a value with a ':' (host:port) is not a token and must be quoted.
  const forwardedTail = host === undefined ? '' : `;proto=${proto};host=${host.includes(':') ? `"${host}"` : host}`;
  const authorization = o.upstreamToken === undefined ? undefined : `Bearer ${o.upstreamToken}`;

  return function upstreamRequestHeaders(req: IncomingMessage, identity: UpstreamIdentity, body: Buffer | undefined): OutgoingHttpHeaders {
    const received = req.headers;
    const named = connectionTokens(received.connection);
    const out: OutgoingHttpHeaders = {};
    if (identity.sharedFill) return sharedFillHeaders(out, identity.requestId);
    for (const name in received) {
      if (neverForwarded(name) || named?.has(name)) continue;
      out[name] = received[name];
    }
    out.host = o.upstreamHost;
    if (authorization !== undefined) out.authorization = authorization;
    if (body !== undefined) {
      out['content-type'] = 'application/json';
      out['content-length'] = body.length;
    }
    out['x-request-id'] = identity.requestId;
    if (identity.keyId !== undefined) out['x-api-key-id'] = identity.keyId;
    if (identity.accountId !== undefined) out['x-consumer-id'] = identity.accountId;

    // Spelled as client-ip.ts spells it: on a dual-stack listener an IPv4 peer is `::ffff:a.b.c.d`.
    const peer = normalizeAddress(req.socket.remoteAddress ?? 'unknown');
    const chain = o.trustProxy ? forwardedForChain(received['x-forwarded-for']) : undefined;
    if (chain === undefined) {
      // The common case, a chain of one: no array to build and join.
      out['x-forwarded-for'] = peer;
    } else {
      chain.push(peer);
      out['x-forwarded-for'] = chain.join(', ');
    }
    if (host !== undefined) {
      out['x-forwarded-proto'] = proto;
      out['x-forwarded-host'] = host;
    }
    out.forwarded = (chain === undefined ? forwardedNode(peer) : chain.map(forwardedNode).join(', ')) + forwardedTail;
    // Without a chain the client is the peer, its address normalised once above.
    out['x-real-ip'] = chain === undefined ? peer : o.clientIp(req);
    return out;
  };

  /**
   * No client header, no caller and no client address: nothing the upstream could tailor the
   * answer by, and identity encoding, since an absent Accept-Encoding would accept any coding.
   */
  function sharedFillHeaders(out: OutgoingHttpHeaders, requestId: string): OutgoingHttpHeaders {
    out.host = o.upstreamHost;
    if (authorization !== undefined) out.authorization = authorization;
    out['accept-encoding'] = 'identity';
    out['x-request-id'] = requestId;
    if (host !== undefined) {
      out['x-forwarded-proto'] = proto;
      out['x-forwarded-host'] = host;
      out.forwarded = forwardedTail.slice(1);
    }
    return out;
  }
}

/** Characters of a header name that CGI front ends turn into `_`, as they do `-` (lighttpd turns every one). */
const READ_AS_DASH = /[^a-z0-9-]/g;

/**
 * Whether a client header is one the gateway drops or writes itself, under any spelling an
 * upstream reads as that header: CGI, Rack and WSGI servers read `X_Consumer_Id` (and lighttpd
 * `X.Consumer.Id`) as `X-Consumer-Id`, all being HTTP_X_CONSUMER_ID, and the later one wins there.
 */
function neverForwarded(name: string): boolean {
  // No match, no copy: replace hands back the name itself.
  const dashed = name.replace(READ_AS_DASH, '-');
  return NEVER_FORWARDED.has(dashed) || dashed.startsWith('x-forwarded') || dashed.startsWith('content-');
}

export type UpstreamRequestHeaders = ReturnType<typeof createUpstreamRequestHeaders>;

/** The load balancer's X-Forwarded-For entries, or undefined when it sent none. */
function forwardedForChain(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const joined = Array.isArray(value) ? value.join(',') : value;
  return joined
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/** RFC 7239 §6: an IPv6 address is bracketed and quoted; anything that is not an address is `unknown`, never copied. */
function forwardedNode(address: string): string {
  if (isIPv4(address)) return `for=${address}`;
  if (isIPv6(address)) return `for="[${address}]"`;
  return 'for=unknown';
}
