import { Socket } from 'node:net';
import { IncomingMessage } from 'node:http';
import { clientIp, normalizeAddress } from './client-ip';

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
