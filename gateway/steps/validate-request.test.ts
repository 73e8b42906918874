import type { IncomingHttpHeaders } from 'node:http';
import { loadOpenApiDocument } from '../../openapi/document';
import { compileOperations } from '../../openapi/operations';
import { refusalOf, runStep, stepRequest } from '../../test/support/run-step';
import { validateRequest } from './validate-request';

const operations = compileOperations(loadOpenApiDocument());
const step = validateRequest({ maxBodyBytes: 1024 });
const JSON_TYPE = { 'content-type': 'application/json' };

/** A request routed as match-route routes it, run through the step; the request is returned to read what the step left on it. */
async function send(method: string, apiPath: string, options: { search?: string; headers?: IncomingHttpHeaders; body?: string; query?: Record<string, unknown> } = {}) {
  const req = stepRequest({ method, apiPath, search: options.search, headers: options.headers, body: options.body, ctx: { route: operations.match(method, apiPath), query: options.query } });
  return { req, outcome: await runStep(step, req) };
}

const invalid = (message: string) => ({ next: 0, body: { code: 'invalid_request', status: 400, message }, headers: {} });

describe('validate-request step', () => {
  test('when no operation matched, then it goes on without reading anything (refusing is not its job)', async () => {
    const { req, outcome } = await send('DELETE', '/pets', { search: 'limit=0', headers: { 'content-length': '2' }, body: '{}' });
    expect(outcome).toEqual({ next: 1 });
    expect(req.ctx.query).toBeUndefined();
    expect(req.readableEnded).toBe(false);
  });

  test('when the query is valid, then the parsed query with its defaults is kept for the later steps, and it goes on', async () => {
    const given = await send('GET', '/pets', { search: 'limit=100&status=sold' });
    expect(given.outcome).toEqual({ next: 1 });
    expect(given.req.ctx.query).toEqual({ limit: 100, status: 'sold' });
    expect((await send('GET', '/pets')).req.ctx.query).toEqual({ limit: 20 });
  });

  test('when the query was parsed already (to start the cache read early), then it is not parsed again', async () => {
    const query = { limit: 5 };
    const { req, outcome } = await send('GET', '/pets', { search: 'limit=0', query });
    expect(outcome).toEqual({ next: 1 });
    expect(req.ctx.query).toBe(query);
  });

  test('when a query or path parameter is invalid, then it is refused with 400 saying which one and why', async () => {
    expect(refusalOf((await send('GET', '/pets', { search: 'limit=0' })).outcome)).toEqual(invalid('query parameter "limit" must be >= 1'));
    expect(refusalOf((await send('GET', '/pets', { search: 'colour=brown' })).outcome)).toEqual(invalid('query parameter "colour" is not supported'));
    expect(refusalOf((await send('GET', '/pets/abc')).outcome)).toEqual(invalid('path parameter "petId" must be integer'));
  });

  test('when an operation that takes no body is sent one, then it is refused with 400, not forwarded without it', async () => {
    for (const headers of [{ 'content-length': '2' }, { 'transfer-encoding': 'chunked' }]) {
      expect(refusalOf((await send('GET', '/pets/3', { headers, body: '{}' })).outcome)).toEqual(invalid('GET /v1/pets/{petId} takes no request body.'));
    }
    expect((await send('GET', '/pets/3', { headers: { 'content-length': '0' } })).outcome).toEqual({ next: 1 });
  });

  test('when a valid JSON body arrives, then what goes upstream is the parsed value serialised again, not the bytes received', async () => {
    const { req, outcome } = await send('POST', '/pets', { headers: JSON_TYPE, body: '{ "name" : "Rex", "categoryId": 1, "name": "Max" }' });
    expect(outcome).toEqual({ next: 1 });
    expect(req.ctx.body?.toString()).toBe('{"name":"Max","categoryId":1}');
  });

  test('when the body breaks the schema, then it is refused with 400 naming the field, and nothing is kept to forward', async () => {
    const { req, outcome } = await send('POST', '/pets', { headers: JSON_TYPE, body: '{"categoryId":1}' });
    expect(refusalOf(outcome)).toEqual(invalid('body field "name" is required'));
    expect(req.ctx.body).toBeUndefined();
  });

  test('when the body is larger than the limit it was built with, then it is refused with 413', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(1100), categoryId: 1 });
    expect(refusalOf((await send('POST', '/pets', { headers: JSON_TYPE, body })).outcome)).toEqual({
      next: 0,
      body: { code: 'payload_too_large', status: 413, message: 'The request body must not exceed 1 KiB.' },
      headers: {},
    });
  });
});
