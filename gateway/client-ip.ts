import type { IncomingMessage } from 'node:http';

/**
 * The client's address. Behind a load balancer (`TRUST_PROXY=true`) it is the last
 * `X-Forwarded-For` entry — the one our own proxy appended, which a client cannot forge.
 */
export function clientIp(req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = req.headers['x-forwarded-for'];
    const value = Array.isArray(forwarded) ? forwarded.join(',') : forwarded;
    if (value) {
      const last = value.split(',').pop()!.trim();
      if (last) return last;
    }
  }
  return req.socket.remoteAddress ?? 'unknown';
}
