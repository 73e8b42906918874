import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** Longer than any textual IPv6 address: what a proxy wrote that is no address is cut to this. */
const MAX_ADDRESS_LENGTH = 64;
const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;
const WITH_PORT = /^(?:\[([^\]]+)\]|(\d{1,3}(?:\.\d{1,3}){3})):\d{1,5}$/;

/**
 * The client's address. Behind a load balancer (`TRUST_PROXY=true`)
 * it is the last `X-Forwarded-For` entry — the one our own proxy appended, which a client cannot
 * forge (entries to its left are the client's to write); otherwise the socket's address.
 */
export function clientIp(req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = req.headers['x-forwarded-for'];
    const value = Array.isArray(forwarded) ? forwarded.join(',') : forwarded;
    if (value) {
      const last = value.slice(value.lastIndexOf(',') + 1).trim();
      if (last) return normalizeAddress(last);
    }
  }
  const remote = req.socket.remoteAddress;
  return remote ? normalizeAddress(remote) : 'unknown';
}

/**
 * One spelling per client: `::ffff:1.2.3.4` (an IPv4 client on a dual-stack listener) is
 * `1.2.3.4`, IPv6 is lower case, and a port some proxies append (`1.2.3.4:5678`, `[::1]:443`) is dropped.
 */
export function normalizeAddress(address: string): string {
  let ip = address;
  if (!isIP(ip)) {
    const withPort = WITH_PORT.exec(ip);
    ip = withPort ? (withPort[1] ?? withPort[2]!) : '';
    if (!isIP(ip)) return address.slice(0, MAX_ADDRESS_LENGTH);
  }
  const mapped = MAPPED_IPV4.exec(ip);
  if (mapped) return mapped[1]!;
  return ip.includes(':') ? ip.toLowerCase() : ip;
}

/**
 * What limits count one client by: its address, or for IPv6 its /64, since one subscriber
 * holds a whole /64 and would otherwise get a fresh budget for every address in it.
 */
export function limitKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/** The key every limiter of a request counts it under: its client address (clientIp), IPv6 by its /64. */
export function clientKey(req: IncomingMessage, trustProxy: boolean): string {
  return limitKey(clientIp(req, trustProxy));
}
