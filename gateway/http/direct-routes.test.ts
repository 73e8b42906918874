import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { sendRaw } from '../../test/support/raw-http';
import { createDirectRoutes, directRouteReporter, sendJson } from './direct-routes';
import { passOnOtherExpectations } from './expect-continue';
import { createFrontHandler } from './front-handler';

/**
 * The front handler with direct routes beside a real Express app, as the gateway mounts them:
 * a direct route must answer on Node's own request and response, whatever Express has handled.
 */
describe('direct routes', () => {
  let server: Server;
  let url: string;
  const lines: Array<{ obj: Record<string, unknown>; msg: string }> = [];
  /** Whether each direct request reached its handler on Node's own prototypes. */
  const shapes: Array<{ nodeRequest: boolean; nodeResponse: boolean }> = [];

  beforeAll(async () => {
    const app = express();
    app.get('/portal', (_req, res) => void res.json({ page: 'portal' }));
    app.use((_req, res) => void res.status(404).json({ from: 'express' }));
    const direct = createDirectRoutes(
      {
        '/healthz': (req, res) => {
          shapes.push({ nodeRequest: Object.getPrototypeOf(req) === IncomingMessage.prototype, nodeResponse: Object.getPrototypeOf(res) === ServerResponse.prototype });
          sendJson(res, 200, { status: 'ok' });
        },
        '/broken': async () => {
          throw new TypeError('the secret is hunter2');
        },
      },
      directRouteReporter({ error: (obj, msg) => void lines.push({ obj: obj as Record<string, unknown>, msg }) }),
    );
    server = createServer(createFrontHandler([], app, { direct }));
    passOnOtherExpectations(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    lines.length = 0;
    shapes.length = 0;
  });

  test('when Express has answered a request, then a direct route still gets Node\'s own request and response, and only its own headers', async () => {
    expect(await (await fetch(`${url}/portal`)).json()).toEqual({ page: 'portal' });
    const res = await fetch(`${url}/healthz?probe=1`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('{"status":"ok"}');
    expect(shapes).toEqual([{ nodeRequest: true, nodeResponse: true }]);
    expect(Object.fromEntries([...res.headers].filter(([name]) => !['date', 'connection', 'keep-alive'].includes(name)))).toEqual({
      'content-type': 'application/json; charset=utf-8',
      'content-length': '15',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
  });

  test('when HEAD is asked, then the same head without a body', async () => {
    const answer = await sendRaw(url, 'HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-length']).toBe('15');
    expect(answer.body).toBe('');
  });

  test('when another method is sent, then 405 with Allow and an Error body no browser sniffs, and the handler does not run', async () => {
    const res = await fetch(`${url}/healthz`, { method: 'POST', body: 'x' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.json()).toEqual({ code: 'method_not_allowed', message: 'POST is not allowed on /healthz.', status: 405 });
    expect(shapes).toEqual([]);
  });

  test('when OPTIONS is asked, then 204 with what the path allows, and the handler does not run', async () => {
    const res = await fetch(`${url}/healthz`, { method: 'OPTIONS' });
    expect([res.status, res.headers.get('allow'), await res.text()]).toEqual([204, 'GET, HEAD, OPTIONS', '']);
    expect(shapes).toEqual([]);
  });

  test('when an expectation other than 100-continue is sent, then 417, and the handler does not run', async () => {
    const answer = await sendRaw(url, 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: the-moon\r\nConnection: close\r\n\r\n');
    expect(answer.status).toBe(417);
    expect(JSON.parse(answer.body)).toEqual({ code: 'expectation_failed', message: 'Only "Expect: 100-continue" is supported; this request expected "the-moon".', status: 417 });
    expect(shapes).toEqual([]);
  });

  test('when a handler fails, then a generic 500 that echoes the request id, and one error line with the cause', async () => {
    const res = await fetch(`${url}/broken?token=abc`, { headers: { 'x-request-id': 'probe-42' } });
    expect(res.status).toBe(500);
    expect(res.headers.get('x-request-id')).toBe('probe-42');
    const body = await res.text();
    expect(JSON.parse(body)).toEqual({ code: 'internal_error', message: 'An unexpected error occurred.', status: 500 });
    expect(body).not.toContain('hunter2');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'request failed', obj: { requestId: 'probe-42', code: 'internal_error', method: 'GET', path: '/broken' } });
    expect((lines[0]!.obj.err as Error).message).toBe('the secret is hunter2');
  });

  test('when the path differs only in case or a trailing slash, then the direct route answers, as the Express route did', async () => {
    for (const path of ['/healthz/', '/HEALTHZ', '/HealthZ/?full=1']) {
      const res = await fetch(url + path);
      expect([path, res.status, await res.text()]).toEqual([path, 200, '{"status":"ok"}']);
    }
    expect(shapes).toHaveLength(3);
  });

  test('when a path only resembles a direct one, then Express answers it', async () => {
    for (const path of ['/healthzz', '/healthz//', '/v1/healthz', '/healthz/x']) {
      const res = await fetch(url + path);
      expect([path, res.status, await res.json()]).toEqual([path, 404, { from: 'express' }]);
    }
    expect(shapes).toEqual([]);
  });
});
