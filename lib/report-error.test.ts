import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError } from './api-error';
import { createErrorReporter, type ErrorReporterOptions, type ReportOptions } from './report-error';

type Line = { obj: Record<string, unknown>; msg: string };

/** A real server whose one handler fails every request with `failure`, through a reporter built with `options`. */
async function serveFailing(failure: () => unknown, options: Partial<ErrorReporterOptions<IncomingMessage>> = {}, reportOptions?: ReportOptions) {
  const lines: Line[] = [];
  const described: string[] = [];
  const report = createErrorReporter<IncomingMessage>({
    logger: { error: (obj, msg) => lines.push({ obj: obj as Record<string, unknown>, msg }) },
    message: 'thing request failed',
    describe: (req) => {
      described.push(req.url!);
      return { requestId: 'req-7', method: req.method, path: req.url!.split('?')[0]! };
    },
    ...options,
  });
  const server: Server = createServer((req, res) => void report(failure(), req, res, reportOptions));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    lines,
    described,
    fetch: (path: string, init?: RequestInit) => fetch(url + path, init),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function expectErrorBody(res: Response, status: number, body: object) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(await res.text()).toBe(JSON.stringify(body));
}

describe('createErrorReporter', () => {
  test.each([
    ['a 4xx ApiError', () => new ApiError('method_not_allowed', 'PUT is not allowed here; allowed: GET.', { headers: { Allow: 'GET' } }), 405, { code: 'method_not_allowed', message: 'PUT is not allowed here; allowed: GET.', status: 405 }],
    ['a client error marked by Node or body-parser', () => Object.assign(new Error('request entity too large'), { status: 413 }), 413, { code: 'payload_too_large', message: 'The request body is too large.', status: 413 }],
  ])('when the failure is %s, then its Error body is rendered exactly, nothing is logged, and the request is not even described', async (_case, failure, status, body) => {
    const t = await serveFailing(failure, { echoRequestId: true });
    try {
      const res = await t.fetch('/things?secret=1', { method: 'PUT' });
      await expectErrorBody(res, status, body);
      if (status === 405) expect(res.headers.get('allow')).toBe('GET');
      expect(res.headers.get('x-request-id')).toBeNull();
      expect(t.lines).toEqual([]);
      expect(t.described).toEqual([]);
    } finally {
      await t.close();
    }
  });

  test('when the failure is a bug, then a generic 500 internal_error, and one error line with the cause, method, path and request id', async () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'hunter2')");
    const t = await serveFailing(() => bug);
    try {
      const res = await t.fetch('/things/3?token=hunter2', { method: 'DELETE' });
      await expectErrorBody(res, 500, { code: 'internal_error', message: 'An unexpected error occurred.', status: 500 });
      expect(res.headers.get('x-request-id')).toBeNull(); // not asked to echo it
      expect(t.lines).toEqual([{ obj: { requestId: 'req-7', code: 'internal_error', method: 'DELETE', path: '/things/3', err: bug }, msg: 'thing request failed' }]);
    } finally {
      await t.close();
    }
  });

  test('when the failure is a 5xx ApiError with a cause, then its own body and headers, and the line carries the cause', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    const t = await serveFailing(() => new ApiError('bad_gateway', 'The upstream could not be reached or closed the connection.', { cause: refused }));
    try {
      const res = await t.fetch('/things');
      await expectErrorBody(res, 502, { code: 'bad_gateway', message: 'The upstream could not be reached or closed the connection.', status: 502 });
      expect(t.lines).toEqual([{ obj: { requestId: 'req-7', code: 'bad_gateway', method: 'GET', path: '/things', err: refused }, msg: 'thing request failed' }]);
    } finally {
      await t.close();
    }
  });

  test('when a 5xx ApiError has no cause, then the line carries the ApiError itself', async () => {
    const timeout = new ApiError('gateway_timeout', 'The upstream did not answer within 300 ms.');
    const t = await serveFailing(() => timeout);
    try {
      await expectErrorBody(await t.fetch('/things'), 504, timeout.toBody());
      expect(t.lines).toEqual([{ obj: expect.objectContaining({ code: 'gateway_timeout', err: timeout }), msg: 'thing request failed' }]);
    } finally {
      await t.close();
    }
  });

  test('when asked to echo the request id, then a 5xx carries it in X-Request-Id, the id its line has', async () => {
    const t = await serveFailing(() => new Error('boom'), { echoRequestId: true });
    try {
      const res = await t.fetch('/things');
      await expectErrorBody(res, 500, { code: 'internal_error', message: 'An unexpected error occurred.', status: 500 });
      expect(res.headers.get('x-request-id')).toBe('req-7');
      expect(t.lines.map((l) => l.obj.requestId)).toEqual(['req-7']);
    } finally {
      await t.close();
    }
  });

  test('when told to be quiet, then a 5xx is rendered with its headers but not logged', async () => {
    const open = () => new ApiError('service_unavailable', 'The upstream is unavailable; retry after 3 s.', { headers: { 'Retry-After': '3' } });
    const t = await serveFailing(open, { echoRequestId: true }, { quiet: true });
    try {
      const res = await t.fetch('/things');
      await expectErrorBody(res, 503, { code: 'service_unavailable', message: 'The upstream is unavailable; retry after 3 s.', status: 503 });
      expect(res.headers.get('retry-after')).toBe('3');
      expect(t.lines).toEqual([]);
    } finally {
      await t.close();
    }
  });

  test('when built without a logger, then a 5xx is still rendered, and its id still echoed', async () => {
    const t = await serveFailing(() => new Error('boom'), { logger: undefined, echoRequestId: true });
    try {
      const res = await t.fetch('/things');
      await expectErrorBody(res, 500, { code: 'internal_error', message: 'An unexpected error occurred.', status: 500 });
      expect(res.headers.get('x-request-id')).toBe('req-7');
    } finally {
      await t.close();
    }
  });
});
