import { loadOpenApiDocument } from '../../openapi/document';
import { compileOperations } from '../../openapi/operations';
import { runStep, stepRequest } from '../../test/support/run-step';
import { matchRoute } from './match-route';

const step = matchRoute(compileOperations(loadOpenApiDocument()));

describe('match-route step', () => {
  test('when the method and path name an operation, then the request carries the operation and its raw path parameters, and goes on', async () => {
    const req = stepRequest({ method: 'GET', apiPath: '/pets/42' });
    expect(await runStep(step, req)).toEqual({ next: 1 });
    expect(req.ctx.operation?.operationId).toBe('getPet');
    expect(req.ctx.route).toEqual({ kind: 'operation', rawParams: ['42'], operation: req.ctx.operation });
  });

  test('when the path is known but the method is not, then the request carries what is allowed, no operation, and goes on (refusing comes after auth)', async () => {
    const req = stepRequest({ method: 'DELETE', apiPath: '/pets' });
    expect(await runStep(step, req)).toEqual({ next: 1 });
    expect(req.ctx.route).toEqual({ kind: 'method_not_allowed', allow: 'GET, HEAD, POST' });
    expect(req.ctx.operation).toBeUndefined();
  });

  test('when no path matches, then the request carries "not found", no operation, and goes on', async () => {
    const req = stepRequest({ method: 'GET', apiPath: '/owners' });
    expect(await runStep(step, req)).toEqual({ next: 1 });
    expect(req.ctx.route).toEqual({ kind: 'not_found' });
    expect(req.ctx.operation).toBeUndefined();
  });

  test('when the request has no method (a parser that left it out), then it is matched as a GET', async () => {
    const req = stepRequest({ apiPath: '/pets' });
    (req as { method?: string }).method = undefined;
    expect(await runStep(step, req)).toEqual({ next: 1 });
    expect(req.ctx.operation?.operationId).toBe('listPets');
  });
});
