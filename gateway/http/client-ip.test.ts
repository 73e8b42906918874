import { Socket } from 'node:net';
import { IncomingMessage } from 'node:http';
import { clientIp, clientKey, limitKey, normalizeAddress } from './client-ip';

function request(remoteAddress: string, headers: Record<string, string | string[]> = {}): IncomingMessage {
  const socket = new Socket();
  Object.defineProperty(socket, 'remoteAddress', { value: remoteAddress });
  const req = new IncomingMessage(socket);
  req.headers = headers as IncomingMessage['headers'];
  return req;
}

describe('client address', () => {
  test('when TRUST_PROXY is off, then the socket address is the client, whatever X-Forwarded-For says', () => {
    expect(clientIp(request('192.0.2.1', { 'x-forwarded-for': '203.0.113.9' }), false)).toBe('192.0.2.1');
  });

  test('when TRUST_PROXY is on, then the client is the last X-Forwarded-For entry (the one the proxy appended), not the leftmost', () => {
    expect(clientIp(request('10.0.0.2', { 'x-forwarded-for': '198.51.100.7, 6.6.6.6 ,203.0.113.9 ' }), true)).toBe('203.0.113.9');
    expect(clientIp(request('10.0.0.2', { 'x-forwarded-for': ['198.51.100.7', '203.0.113.9'] }), true)).toBe('203.0.113.9');
  });

  test('when TRUST_PROXY is on but the header is missing or ends empty, then the socket address is the client', () => {
    expect(clientIp(request('10.0.0.2'), true)).toBe('10.0.0.2');
    expect(clientIp(request('10.0.0.2', { 'x-forwarded-for': '198.51.100.7, ' }), true)).toBe('10.0.0.2');
  });

  test('when an IPv4 client arrives on a dual-stack listener as ::ffff:a.b.c.d, then it has the same address as over IPv4', () => {
    expect(clientIp(request('::ffff:192.0.2.1'), false)).toBe('192.0.2.1');
    expect(clientIp(request('10.0.0.2', { 'x-forwarded-for': '::FFFF:203.0.113.9' }), true)).toBe('203.0.113.9');
  });

  test.each([
    ['upper-case IPv6', '2001:DB8::1', '2001:db8::1'],
    ['IPv4 with a port', '203.0.113.9:51234', '203.0.113.9'],
    ['bracketed IPv6 with a port', '[2001:db8::1]:443', '2001:db8::1'],
    ['bracketed mapped IPv4 with a port', '[::ffff:203.0.113.9]:443', '203.0.113.9'],
    ['a word', 'unknown', 'unknown'],
    ['brackets around no address', '[not an address]:80', '[not an address]:80'],
    ['500 characters of no address', 'x'.repeat(500), 'x'.repeat(64)],
  ])('when a proxy writes %s, then the limiters see one bounded spelling', (_label, written, address) => {
    expect(normalizeAddress(written)).toBe(address);
  });
});

describe('limit key', () => {
  test.each([
    ['an IPv4 address', '203.0.113.7', '203.0.113.7'],
    ['a full IPv6 address', '2001:db8:aaaa:bbbb:1:2:3:4', '2001:db8:aaaa:bbbb::/64'],
    ['a compressed IPv6 address', '2001:db8::1', '2001:db8:0:0::/64'],
    ['another address in the same /64', '2001:db8:0:0:ffff::2', '2001:db8:0:0::/64'],
    ['leading zeros', '2001:0db8:0000:00ab::9', '2001:db8:0:ab::/64'],
    ['the loopback', '::1', '0:0:0:0::/64'],
    ['an IPv4-embedded IPv6 address', '64:ff9b::198.51.100.1', '64:ff9b:0:0::/64'],
    ['what a proxy wrote that is no address', 'unknown', 'unknown'],
  ])('when the client is %s, then it is counted as %s', (_label, address, key) => {
    expect(limitKey(address)).toBe(key);
  });

  test('when one IPv6 client rotates addresses inside its /64, then every limiter counts it once', () => {
    expect(clientKey(request('2001:db8:1:2::a'), false)).toBe(clientKey(request('2001:db8:1:2:ffff:ffff:ffff:ffff'), false));
    expect(clientKey(request('10.0.0.1', { 'x-forwarded-for': '2001:db8:1:2::a' }), true)).toBe('2001:db8:1:2::/64');
  });
});
