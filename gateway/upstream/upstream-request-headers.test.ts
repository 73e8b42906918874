import type { IncomingMessage } from 'node:http';
import { clientIp } from '../http/client-ip';
import { createUpstreamRequestHeaders } from './upstream-request-headers';

/** A received request as Node's parser hands it over: lower-cased names, duplicates joined. */
function received(headers: Record<string, string>, remoteAddress = '10.0.0.2'): IncomingMessage {
  return { headers, socket: { remoteAddress } } as unknown as IncomingMessage;
}

const IDENTITY = { requestId: 'req-1', keyId: 'key_1', accountId: '42' };

function build(trustProxy: boolean, publicUrl: string | undefined = 'https://api.example.com', upstreamToken?: string) {
  return createUpstreamRequestHeaders({ upstreamHost: 'pets.internal:8443', publicUrl, trustProxy, clientIp: (req) => clientIp(req, trustProxy), upstreamToken });
}

const FORGED = {
  host: 'evil.example',
  authorization: 'Bearer asg_live_secret',
  'proxy-authorization': 'Bearer asg_live_secret',
  cookie: 'asg_session=stolen',
  'x-forwarded-for': '203.0.113.7',
  'x-forwarded-host': 'evil.example',
  'x-forwarded-proto': 'http',
  'x-forwarded-port': '1',
  forwarded: 'for=6.6.6.6;host=evil.example',
  'x-real-ip': '6.6.6.6',
  'true-client-ip': '6.6.6.6',
  'x-request-id': 'forged-id',
  'x-api-key-id': 'key_forged',
  'x-consumer-id': '1',
  'x-http-method-override': 'DELETE',
  'x-original-url': '/admin',
  connection: 'keep-alive, X-Hop-Secret',
  'x-hop-secret': 'shh',
  'keep-alive': 'timeout=5',
  te: 'trailers',
  trailer: 'x-late',
  upgrade: 'websocket',
  'proxy-connection': 'keep-alive',
  expect: '100-continue',
  'content-md5': 'abc',
  'content-encoding': 'gzip',
  'transfer-encoding': 'chunked',
  accept: 'application/json',
  'user-agent': 'forger/1.0',
};

/** What the gateway writes for IDENTITY's request from 10.0.0.2, whatever the client sent. */
const WRITTEN = {
  'x-request-id': 'req-1',
  'x-api-key-id': 'key_1',
  'x-consumer-id': '42',
  'x-forwarded-for': '10.0.0.2',
  'x-forwarded-proto': 'https',
  'x-forwarded-host': 'api.example.com',
  forwarded: 'for=10.0.0.2;proto=https;host=api.example.com',
  'x-real-ip': '10.0.0.2',
};

describe('upstream request headers', () => {
  test('when a client forges credentials, hop-by-hop, identity and forwarding headers, then only its end-to-end headers are kept and the gateway writes the rest', () => {
    expect(build(false)(received(FORGED), IDENTITY, undefined)).toEqual({
      host: 'pets.internal:8443',
      accept: 'application/json',
      'user-agent': 'forger/1.0',
      ...WRITTEN,
    });
  });

  test('when a client spells the headers the gateway writes or drops with underscores or dots, then none of them reaches the upstream; other underscored headers do', () => {
    // CGI, Rack and WSGI servers read X_Consumer_Id as X-Consumer-Id (HTTP_X_CONSUMER_ID), the later of the two winning; lighttpd reads X.Consumer.Id so too.
    const headers = build(false)(
      received({
        x_consumer_id: '1',
        'x.consumer.id': '2',
        'x~real~ip': '6.6.6.6',
        'x-api-key_id': 'key_forged',
        x_request_id: 'forged-id',
        x_real_ip: '6.6.6.6',
        x_forwarded_for: '6.6.6.6',
        'x-forwarded_host': 'evil.example',
        true_client_ip: '6.6.6.6',
        x_http_method_override: 'DELETE',
        x_original_url: '/admin',
        proxy_authorization: 'Bearer asg_live_secret',
        content_length: '5',
        x_trace_id: 'abc',
      }),
      IDENTITY,
      undefined,
    );
    expect(headers).toEqual({
      host: 'pets.internal:8443',
      x_trace_id: 'abc',
      ...WRITTEN,
    });
  });

  test('when behind a trusted proxy, then its X-Forwarded-For chain is extended with the peer, Forwarded lists the same nodes, and X-Real-IP is the entry the proxy appended', () => {
    const headers = build(true)(received({ 'x-forwarded-for': '203.0.113.7, not-an-ip,2001:db8::1', forwarded: 'for=6.6.6.6' }), IDENTITY, undefined);
    expect(headers['x-forwarded-for']).toBe('203.0.113.7, not-an-ip, 2001:db8::1, 10.0.0.2');
    expect(headers.forwarded).toBe('for=203.0.113.7, for=unknown, for="[2001:db8::1]", for=10.0.0.2;proto=https;host=api.example.com');
    expect(headers['x-real-ip']).toBe('2001:db8::1');
  });

  test('when an IPv4 client reaches a dual-stack listener, then every forwarding header names it as IPv4, as X-Real-IP does', () => {
    const direct = build(false)(received({}, '::ffff:10.0.0.2'), IDENTITY, undefined);
    expect([direct['x-forwarded-for'], direct.forwarded, direct['x-real-ip']]).toEqual(['10.0.0.2', 'for=10.0.0.2;proto=https;host=api.example.com', '10.0.0.2']);
    const proxied = build(true)(received({ 'x-forwarded-for': '203.0.113.7' }, '::FFFF:10.0.0.9'), IDENTITY, undefined);
    expect([proxied['x-forwarded-for'], proxied.forwarded]).toEqual(['203.0.113.7, 10.0.0.9', 'for=203.0.113.7, for=10.0.0.9;proto=https;host=api.example.com']);
  });

  test('when a body is forwarded, then its type and length describe the bytes the gateway sends, not what the client declared', () => {
    const body = Buffer.from('{"name":"b"}');
    const headers = build(false)(received({ 'content-type': 'application/json; charset=latin1', 'content-length': '31', 'transfer-encoding': 'chunked' }), IDENTITY, body);
    expect(headers['content-type']).toBe('application/json');
    expect(headers['content-length']).toBe(body.length);
    expect(headers['transfer-encoding']).toBeUndefined();
  });

  test('when the upstream has a token and the public URL a port, then the token replaces the client credential and the Forwarded host is quoted', () => {
    const headers = build(false, 'http://localhost:8080', 't'.repeat(32))(received({ authorization: 'Bearer client' }), { requestId: 'req-2' }, undefined);
    expect(headers.authorization).toBe(`Bearer ${'t'.repeat(32)}`);
    expect(headers.forwarded).toBe('for=10.0.0.2;proto=http;host="localhost:8080"');
    expect(headers['x-api-key-id']).toBeUndefined();
    expect(headers['x-consumer-id']).toBeUndefined();
  });
});
