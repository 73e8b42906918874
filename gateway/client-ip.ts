import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** Longer than any textual IPv6 address: what a proxy wrote that is no address is cut to this. */
const MAX_ADDRESS_LENGTH = 64;
const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;
const WITH_PORT = /^(?:\[([^\]]+)\]|(\d{1,3}(?:\.\d{1,3}){3})):\d{1,5}$/;

/**
 * The client's address, the one every limiter keys on. Behind a load balancer (`TRUST_PROXY=true`)
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
