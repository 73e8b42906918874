import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Request, type Response } from 'express';
import { renderError } from '../../lib/render-error';
import { ADMIN_DOCUMENT_PATH, loadOpenApiDocument } from '../../openapi/document';
import type { AdminCall, AdminHandler } from './admin-handlers';
import { createAdminHandlers } from './admin-handlers';
import { adminRoutes } from './admin-routes';
import { adminState } from './admin-state';

const document = loadOpenApiDocument(ADMIN_DOCUMENT_PATH);
const operationIds = Object.keys(createAdminHandlers({} as never));

describe('adminRoutes', () => {
  let server: Server;
  let base: string;
  const calls: Array<{ operationId: string; call: AdminCall }> = [];

  beforeAll(async () => {
    const handlers: Record<string, AdminHandler> = Object.fromEntries(
      operationIds.map((operationId) => [
        operationId,
        async (call: AdminCall) => {
          calls.push({ operationId, call });
          return { status: 200, body: { operationId } };
        },
      ]),
    );
    const app = express();
    app.use((_req, res, next) => {
      Object.assign(adminState(res), { requestId: 'req-1', actor: 'admin:ops' });
      next();
    });
    app.use(adminRoutes({ document, handlers, basePath: '/admin/v1', maxBodyBytes: 1024 }));
    app.use((err: unknown, _req: Request, res: Response, _next: () => void) => void renderError(res, err));
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => {
    calls.length = 0;
  });

  test('when a handler is missing for an operation, or has none, then building fails naming both', () => {
    const handlers = Object.fromEntries(operationIds.filter((id) => id !== 'getAccount').map((id) => [id, async () => ({ status: 204 })]));
    expect(() => adminRoutes({ document, handlers: { ...handlers, stray: async () => ({ status: 204 }) }, basePath: '/admin/v1', maxBodyBytes: 1 })).toThrow(
      'adminRoutes: no handler for getAccount; no operation for stray',
    );
  });

  test('when a request matches, then its handler gets typed path and query values, the defaults, and the audit context', async () => {
    const res = await fetch(`${base}/admin/v1/audit?accountId=7`);
    expect(await res.json()).toEqual({ operationId: 'listAuditEntries' });
    expect(calls[0]!.call).toEqual({
      params: {},
      query: { accountId: 7, limit: 50 },
      body: undefined,
      audit: { actor: 'admin:ops', requestId: 'req-1' },
    });
  });

  test('when an optional body is left out, then the handler runs without one; when a required one is, then 400 before it runs', async () => {
    expect((await fetch(`${base}/admin/v1/accounts/3/reinstate`, { method: 'POST' })).status).toBe(200);
    expect(calls[0]!.call).toMatchObject({ params: { id: 3 }, body: undefined });
    const res = await fetch(`${base}/admin/v1/accounts/3/suspend`, { method: 'POST' });
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 400, body: { code: 'invalid_request', message: 'A JSON request body is required.', status: 400 } });
    expect(calls).toHaveLength(1);
  });

  test('when an operation without a body is sent one, then 400 naming the operation, and the handler does not run', async () => {
    // fetch sends no body with a GET; node:http does.
    const res = await new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const req = request(`${base}/admin/v1/plans`, { method: 'GET', headers: { 'content-type': 'application/json', 'content-length': '2' } }, (answer) => {
        let text = '';
        answer.on('data', (chunk: Buffer) => (text += chunk.toString()));
        answer.on('end', () => resolve({ status: answer.statusCode!, body: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.end('{}');
    });
    expect(res).toEqual({ status: 400, body: { code: 'invalid_request', message: 'GET /admin/v1/plans takes no request body.', status: 400 } });
    expect(calls).toHaveLength(0);
  });
});
