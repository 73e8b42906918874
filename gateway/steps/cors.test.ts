import { ApiError } from '../../lib/api-error';
import type { GatewayRequest } from '../pipeline/pipeline';
import { ResponseHeaders } from '../http/response-headers';
import { cors } from './cors';

const PORTAL = 'https://developers.example.test';
const GATEWAY = 'http://127.0.0.1:8080';

/** Runs the step on a request; `headers` is what the response carries, written (preflight) or pending for later steps. */
function run(headers: Record<string, string>, method = 'GET') {
  const step = cors({ allowedOrigins: [PORTAL, GATEWAY] });
  const ctx = { headers: new ResponseHeaders() };
  const res = {
    statusCode: 200,
    ended: false,
    writeHead(status: number, list: Array<string | number>) {
      this.statusCode = status;
      written.push(...list);
    },
    end() {
      this.ended = true;
    },
  };
  const written: Array<string | number> = [];
  let passed: unknown = 'not called';
  void step({ method, headers, ctx } as unknown as GatewayRequest, res as never, (err?: unknown) => void (passed = err));
  const carried: Record<string, string> = {};
  for (const list of [written, ctx.headers.list]) for (let i = 0; i < list.length; i += 2) carried[String(list[i]).toLowerCase()] = String(list[i + 1]);
  return { headers: carried, status: res.statusCode, ended: res.ended, passed };
}

describe('cors step', () => {
  test('when a request has no Origin (curl, servers), then it passes untouched', () => {
    expect(run({})).toEqual({ headers: {}, status: 200, ended: false, passed: undefined });
  });

  test('when a page from an allowed origin sends a request, then it may read the response and the headers the docs show', () => {
    const { headers, passed, ended } = run({ origin: PORTAL, authorization: 'Bearer x' });
    expect(passed).toBeUndefined();
    expect(ended).toBe(false);
    expect(headers).toEqual({
      vary: 'Origin',
      'access-control-allow-origin': PORTAL,
      'access-control-expose-headers': 'Deprecation, Sunset, Link, Location, X-Request-Id, RateLimit, RateLimit-Policy, Retry-After',
    });
  });

  test('when an allowed origin sends a preflight, then it is answered 204 at once, without a key, and never allows credentials', () => {
    const result = run({ origin: GATEWAY, 'access-control-request-method': 'POST', 'access-control-request-headers': 'Authorization, content-type, x-request-id' }, 'OPTIONS');
    expect(result).toEqual({
      status: 204,
      ended: true,
      passed: 'not called',
      headers: {
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
        'access-control-allow-origin': GATEWAY,
        'access-control-allow-methods': 'GET, HEAD, POST',
        'access-control-allow-headers': 'Authorization, Content-Type, X-Request-Id',
        'access-control-max-age': '600',
      },
    });
  });

  test('when another origin sends a request, then it passes without CORS headers (the browser keeps the answer from the page)', () => {
    expect(run({ origin: 'https://evil.example' })).toEqual({ headers: { vary: 'Origin' }, status: 200, ended: false, passed: undefined });
    // Origins are compared exactly: no prefix, suffix or scheme tricks.
    for (const origin of [`${PORTAL}.evil.example`, 'http://developers.example.test', `${PORTAL}:443x`, 'null']) {
      expect(run({ origin }).headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  test('when another origin, a method or a header outside the list is preflighted, then it is refused with 403', () => {
    const refusals = [
      run({ origin: 'https://evil.example', 'access-control-request-method': 'GET' }, 'OPTIONS'),
      run({ origin: PORTAL, 'access-control-request-method': 'DELETE' }, 'OPTIONS'),
      run({ origin: PORTAL, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, x-debug' }, 'OPTIONS'),
    ];
    for (const r of refusals) {
      expect(r.passed).toBeInstanceOf(ApiError);
      expect((r.passed as ApiError).code).toBe('forbidden');
      expect(r.headers['access-control-allow-methods']).toBeUndefined();
    }
    expect((refusals[2]!.passed as ApiError).message).toContain('x-debug');
  });

  test('when it is built with something that is not an origin, then it fails at start-up', () => {
    expect(() => cors({ allowedOrigins: [] })).toThrow('must not be empty');
    expect(() => cors({ allowedOrigins: ['https://a.example/path'] })).toThrow('not an origin');
    expect(() => cors({ allowedOrigins: ['*'] })).toThrow('not an origin');
    expect(() => cors({ allowedOrigins: [PORTAL], maxAgeSeconds: -1 })).toThrow('maxAgeSeconds');
  });
});
